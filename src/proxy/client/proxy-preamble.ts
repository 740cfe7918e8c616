/**
 * Which listeners read a PROXY header (`--proxy-protocol`), and the first bytes of one connection on
 * such a listener: gathered until the header is whole (bounded: never more than a v2 header may be), then
 * the client it names and the bytes after it. Only a peer in `--proxy-protocol-from` (else
 * `--trusted-proxies`) may send one; a connection from any other peer, without a header, or with a
 * malformed one is refused, never served.
 */
import { MAX_V2_BYTES, parseProxyHeader } from "./proxy-protocol.ts";

/** `--proxy-protocol`: no listener, every HTTP and HTTPS listener of the raw front, or those on these ports. */
export type ProxyProtocolListeners = "none" | "all" | readonly number[];

/** A listener whose port (as the model names it) is `port` reads a PROXY header first. */
export function readsProxyHeader(setting: ProxyProtocolListeners | undefined, port: number): boolean {
  if (setting === undefined || setting === "none") return false;
  return setting === "all" || setting.includes(port);
}

/** How long a connection may take to send its whole PROXY header (balancers send it with the connect). */
export const PROXY_HEADER_TIMEOUT_SECONDS = 10;

export type PreambleStep =
  | { readonly kind: "wait" }
  | { readonly kind: "refused"; readonly reason: string }
  /** `source`: the client the header names (undefined: the socket's peer stands); `rest`: bytes after it. */
  | { readonly kind: "done"; readonly source: string | undefined; readonly rest: Buffer };

const WAIT: PreambleStep = { kind: "wait" };

export class ProxyPreamble {
  private held: Buffer | undefined;

  /** The next bytes the client sent. */
  feed(chunk: Uint8Array): PreambleStep {
    const buf = this.held === undefined ? Buffer.from(chunk) : Buffer.concat([this.held, chunk]);
    const r = parseProxyHeader(buf);
    if (r.kind === "invalid") return { kind: "refused", reason: r.reason };
    if (r.kind === "incomplete") {
      if (buf.length >= MAX_V2_BYTES) return { kind: "refused", reason: "PROXY header too long" };
      // Bun may reuse its read buffer: what waits is a copy (Buffer.from copied it above, or concat did).
      this.held = buf;
      return WAIT;
    }
    this.held = undefined;
    return { kind: "done", source: r.source, rest: buf.subarray(r.length) };
  }
}
