/**
 * The raw front's side of response compression (rules: compression/response-rules.ts): whether an
 * upstream response is compressed for this request, read from the two heads as they are, and the relay
 * that passes its body on, compressed or not. A backend without compression costs one undefined check.
 */
import type { ResponseBandwidth } from "../../../model/index.ts";
import { ResponseEncoder } from "../../compression/encoder.ts";
import {
  type CompiledCompression,
  compressibleResponse,
  requestedCoding,
  varyWithAcceptEncoding,
} from "../../compression/response-rules.ts";
import type { ClientSide } from "../client-side.ts";
import { encodedHead, passedOnHead, type ResponseHeaderEdit } from "../http1/head-to-client.ts";
import type { RequestHead } from "../http1/request-head.ts";
import { RES_CHUNKED, RES_CLOSE, RES_LENGTH, RES_NONE, type ResponseHead } from "../http1/response-head.ts";
import { type ClientHead, type RelayOwner, ResponseRelay } from "./relay.ts";

/**
 * The relay for `res`: the body in the upstream's framing (chunked decoded for HTTP/1.0 clients), or
 * compressed and chunked (until close for HTTP/1.0 clients), with its `clientHead` when the head is
 * not `passedOnHead`'s (a compressed body, or one that only gains `Vary`).
 */
export function clientRelay(
  conn: ClientSide,
  req: RequestHead,
  res: ResponseHead,
  owner: RelayOwner,
  bandwidth: ResponseBandwidth | undefined,
  compression: CompiledCompression | undefined,
): ResponseRelay {
  const coding = compression === undefined ? undefined : codingOf(compression, req, res);
  const encoder = coding?.encoder;
  // Sent in a framing of our own: chunked to HTTP/1.1 clients, until close to HTTP/1.0 ones.
  const reframed = encoder !== undefined || res.bodyKind === RES_CHUNKED;
  const chunkedOut = reframed && !req.http10;
  const close = !req.keepAlive || res.bodyKind === RES_CLOSE || (reframed && req.http10);
  const relay = new ResponseRelay(conn, res, chunkedOut, close, owner, bandwidth);
  if (encoder !== undefined) relay.encodeWith(encoder, chunkedOut);
  relay.clientHead = coding?.head;
  return relay;
}

/** Undefined: `res` is not compressible (passed on untouched); else its encoder (if any) and head. */
function codingOf(
  c: CompiledCompression,
  req: RequestHead,
  res: ResponseHead,
): { encoder: ResponseEncoder | undefined; head: ClientHead | undefined } | undefined {
  if (res.bodyKind === RES_NONE) return undefined;
  const fields = { get: (name: string) => fieldOf(res.names, res.values, name) };
  const length = res.bodyKind === RES_LENGTH ? res.contentLength : -1;
  if (!compressibleResponse(c, res.status, length, fields)) return undefined;
  let accept: string | null = null;
  let range = false;
  for (let i = 0; i < req.fieldCount; i++) {
    if (req.nameIs(i, "accept-encoding"))
      accept = accept === null ? req.value(i) : `${accept}, ${req.value(i)}`;
    else if (req.nameIs(i, "range")) range = true;
  }
  const coding = requestedCoding(c, req.method, accept, range);
  if (coding !== undefined)
    return {
      encoder: new ResponseEncoder(coding, c),
      head: (...args) => encodedHead(coding, ...args),
    };
  // Not compressed for this client, but the response varies on what it accepts.
  const vary = varyWithAcceptEncoding(fieldOf(res.names, res.values, "vary"));
  if (vary === undefined) return { encoder: undefined, head: undefined };
  return { encoder: undefined, head: (...args) => passedOnHead(...withVary(args)) };
}

const VARY: readonly [string, string] = ["vary", "Accept-Encoding"];
const NO_FIELDS: readonly (readonly [string, string])[] = [];

/** `passedOnHead`'s arguments with `Vary: Accept-Encoding` appended by the edit. */
function withVary(args: Parameters<ClientHead>): Parameters<ClientHead> {
  const edit: ResponseHeaderEdit | undefined = args[6];
  const out = [...args] as Parameters<ClientHead>;
  out[6] = { append: [...(edit?.append ?? NO_FIELDS), VARY], set: edit?.set ?? NO_FIELDS };
  return out;
}

/** Every value of the field `name` (lower-case), joined with ", "; null when absent. */
function fieldOf(names: readonly string[], values: readonly string[], name: string): string | null {
  let out: string | null = null;
  for (let i = 0; i < names.length; i++)
    if (names[i] === name) out = out === null ? (values[i] as string) : `${out}, ${values[i]}`;
  return out;
}
