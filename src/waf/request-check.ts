/**
 * The route's WAF on the full request path (proxy/request/handler.ts, a fetch Request): the first `requestBodyLimitBytes` of the body are
 * read (a longer one is refused with 413, or inspected in part and forwarded whole), then the request
 * line, headers and those bytes go to the engine's worker (engine-queue.ts). The body read here is
 * what `forward()` sends: whole when it fit, else the bytes read followed by the rest of the stream.
 */
import { randomUUID } from "node:crypto";
import { CLIENT_GONE } from "../proxy/request/forward.ts";
import { type CompiledWaf, wafFailure } from "./compiled.ts";
import { decideWaf, tooLarge, unavailable, wafResponse } from "./decide.ts";

/** Where the request arrived and what it asked for, as the handler parsed it. */
export interface CheckedRequest {
  readonly req: Request;
  /** The path and query as routed (`?…` or ""). */
  readonly path: string;
  readonly query: string;
  readonly client: string;
  /** The listener's address ("" when bound to every one) and port. */
  readonly serverAddress: string;
  readonly serverPort: number;
}

/** What forward() sends instead of `req.body` once the WAF read it; undefined: no body. */
export type InspectedBody = Uint8Array | ReadableStream<Uint8Array> | undefined;

export type WafChecked = { readonly answer: Response } | { readonly body: InspectedBody };

export async function checkWaf(
  waf: CompiledWaf,
  r: CheckedRequest,
  serverHeader: string,
): Promise<WafChecked> {
  const req = r.req;
  if (wafFailure(waf) !== undefined) return { answer: wafResponse(unavailable(waf), serverHeader) };
  const limit = waf.settings.requestBodyLimitBytes;
  let read: ReadHead | undefined;
  try {
    read = req.body === null ? undefined : await readUpTo(req.body, limit);
  } catch {
    // The client went away or broke its framing while sending: nobody is left to answer, nothing is forwarded.
    return { answer: new Response(null, { status: 400, headers: { server: serverHeader } }) };
  }
  if (read?.over === true && waf.settings.requestBodyOverLimit === "Reject") {
    read.reader.cancel().catch(() => {});
    return { answer: wafResponse(tooLarge(waf), serverHeader) };
  }
  const idHeader = waf.settings.transactionIdHeader;
  const outcome = await decideWaf(waf, {
    clientAddress: r.client,
    clientPort: 0,
    serverAddress: r.serverAddress === "" ? "0.0.0.0" : r.serverAddress,
    serverPort: r.serverPort,
    method: req.method,
    // Bun.serve has resolved `.` and `..` segments already: the engine sees the path the backend gets.
    target: r.path + r.query,
    httpVersion: "1.1",
    headers: req.headers,
    body: read?.head,
    transactionId: (idHeader !== undefined ? req.headers.get(idHeader) : null) ?? randomUUID(),
  });
  if (!outcome.pass) {
    read?.reader.cancel().catch(() => {});
    return { answer: wafResponse(outcome, serverHeader) };
  }
  if (req.signal.aborted) {
    // The client went away while the engine decided: nothing is forwarded for nobody.
    read?.reader.cancel().catch(() => {});
    return { answer: new Response(null, { status: CLIENT_GONE, headers: { server: serverHeader } }) };
  }
  if (read === undefined) return { body: undefined };
  return { body: read.over ? prefixed(read.chunks, read.reader) : read.head };
}

interface ReadHead {
  /** The first bytes, at most the limit. */
  readonly head: Uint8Array;
  /** Every chunk read so far (their sum may pass the limit by one chunk). */
  readonly chunks: readonly Uint8Array[];
  /** More than the limit was sent. */
  readonly over: boolean;
  readonly reader: ReadableStreamDefaultReader<Uint8Array>;
}

async function readUpTo(body: ReadableStream<Uint8Array>, limit: number): Promise<ReadHead> {
  const reader = body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size <= limit) {
    const r = await reader.read();
    if (r.done) break;
    chunks.push(r.value);
    size += r.value.byteLength;
  }
  const all = chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, size);
  return { head: size > limit ? all.subarray(0, limit) : all, chunks, over: size > limit, reader };
}

/** The chunks already read, then the rest of the body as the client sends it. */
function prefixed(
  chunks: readonly Uint8Array[],
  reader: ReadableStreamDefaultReader<Uint8Array>,
): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i < chunks.length) {
        controller.enqueue(chunks[i++] as Uint8Array);
        return;
      }
      const r = await reader.read();
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
