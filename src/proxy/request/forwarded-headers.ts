/**
 * What the gateway adds to a request going upstream. X-Forwarded-For is appended to (the chain is the
 * client's business); Proto, Host and Port describe this hop and are overwritten, so a client cannot
 * claim it came in over HTTPS. X-Request-Id is kept when the client's is sane, so traces can join up.
 */
import { stripHopByHop } from "./hop-by-hop.ts";

export interface HopInfo {
  readonly clientIp: string;
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
  const xff = h.get("x-forwarded-for");
  if (hop.clientIp !== "") h.set("x-forwarded-for", xff === null ? hop.clientIp : `${xff}, ${hop.clientIp}`);
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
