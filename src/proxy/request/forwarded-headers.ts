/**
 * What the gateway adds to a request going upstream. X-Forwarded-For is the peer, appended to the chain
 * a trusted proxy sent and replacing any other peer's (client/trusted-proxies.ts `forwardedFor`); Proto,
 * Host and Port describe this hop and are overwritten, so a client cannot claim it came in over HTTPS.
 * X-Request-Id is kept when the client's is sane, so traces can join up.
 */
import { forwardedFor } from "../client/trusted-proxies.ts";
import { stripHopByHop } from "./hop-by-hop.ts";

export interface HopInfo {
  /** The connection's peer (the socket's address, or a PROXY header's source); "" when unknown. */
  readonly peer: string;
  /** The peer is a trusted proxy: the X-Forwarded-For it sent is kept. */
  readonly peerTrusted: boolean;
  readonly scheme: "http" | "https";
  readonly port: number;
  /** The Host header as the client sent it (null when none). */
  readonly host: string | null;
}

/** Edits `h` in place (Bun lets the request's own Headers be changed; copying would cost). */
export function prepareUpstreamHeaders(h: Headers, hop: HopInfo): string {
  stripHopByHop(h);
  // Bun.serve has already answered any `Expect: 100-continue`; the body is on its way regardless.
  h.delete("expect");
  const xff = forwardedFor(hop.peer, hop.peerTrusted ? h.get("x-forwarded-for") : null, hop.peerTrusted);
  if (xff !== "") h.set("x-forwarded-for", xff);
  else h.delete("x-forwarded-for");
  h.set("x-forwarded-proto", hop.scheme);
  if (hop.host !== null) h.set("x-forwarded-host", hop.host);
  else h.delete("x-forwarded-host");
  h.set("x-forwarded-port", String(hop.port));
  let id = h.get("x-request-id");
  if (id === null || !isSaneRequestId(id)) {
    id = newRequestId();
    h.set("x-request-id", id);
  }
  return id;
}

// 32 hex characters like ingress-nginx's $req_id: a random per-process prefix and a counter. Unique
// across processes by the prefix, and much cheaper than a random UUID per request (measured).
let idPrefix = randomHex(20);
let idCounter = 0;

/** A fresh request id. */
export function newRequestId(): string {
  if (++idCounter > 0xffffffffffff) {
    idPrefix = randomHex(20);
    idCounter = 1;
  }
  const hex = idCounter.toString(16);
  return idPrefix + (ZEROS[12 - hex.length] as string) + hex;
}

/** "" … "00000000000": the zeros that pad a counter to 12 hex digits (no padStart call per request). */
const ZEROS = Array.from({ length: 12 }, (_, n) => "0".repeat(n));

function randomHex(chars: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(chars / 2));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** 1–128 visible ASCII characters: safe to log and to pass on. */
export function isSaneRequestId(id: string): boolean {
  if (id.length === 0 || id.length > 128) return false;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}
