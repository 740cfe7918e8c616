/**
 * What the TLS handshake of a client's connection settled, as the request path sees it: the SNI name,
 * whether the client's certificate was verified, and its chain (leaf first), for guards that check client
 * certificates. On the raw front the fast path reads it from the connection (raw-front/client-side.ts
 * TlsSession); a request the front relays to the listener's app carries it in RELAYED_TLS_HEADER, which,
 * like RELAYED_CLIENT_HEADER, the front always drops from what the client sent and only the internal
 * listener reads (`takeRelayedTls`).
 */
export const RELAYED_TLS_HEADER = "x-gatehouse-relayed-tls";

export interface ClientTls {
  /** The SNI name ("" without SNI). */
  readonly servername: string;
  /** The client's certificate was verified against the listener's CAs. */
  readonly authorized: boolean;
  /** DER certificates, leaf first; empty when none was asked for or sent. */
  readonly chain: readonly Buffer[];
}

/** `1;<servername, URI-encoded>;<base64 DER>,<base64 DER>…`: one line of header-safe characters. */
export function relayedTlsValue(t: ClientTls): string {
  const chain = t.chain.map((c) => c.toString("base64")).join(",");
  return `${t.authorized ? 1 : 0};${encodeURIComponent(t.servername)};${chain}`;
}

/** The inverse of `relayedTlsValue`; undefined for anything else. */
export function parseRelayedTls(value: string): ClientTls | undefined {
  const m = /^([01]);([^;]*);([A-Za-z0-9+/=,]*)$/.exec(value);
  if (m === null) return undefined;
  try {
    const chain = m[3] === "" ? [] : (m[3] as string).split(",").map((b) => Buffer.from(b, "base64"));
    return { authorized: m[1] === "1", servername: decodeURIComponent(m[2] as string), chain };
  } catch {
    return undefined; // a malformed %-escape
  }
}

const relayed = new WeakMap<Request, ClientTls>();

/** Internal listener only: moves the front's header out of `req` into what `clientTls` gives. */
export function takeRelayedTls(req: Request): void {
  const value = req.headers.get(RELAYED_TLS_HEADER);
  if (value === null) return;
  req.headers.delete(RELAYED_TLS_HEADER);
  const tls = parseRelayedTls(value);
  if (tls !== undefined) relayed.set(req, tls);
}

/** The TLS session of the request's connection, where the raw front relayed one. */
export function clientTls(req: Request): ClientTls | undefined {
  return relayed.get(req);
}

const servernames = new WeakMap<Request, string>();

/**
 * node:http2's servers (h2/session-server.ts, h2/listener.ts) see the connection's SNI name but relay no
 * certificate: `connectionServername` gives the guard that name, so a coalesced request for another host
 * gets 421 (the client retries on a connection of its own) rather than 500.
 */
export function bindServername(req: Request, servername: string | false | null | undefined): void {
  servernames.set(req, servername || "");
}

/** The SNI name of the request's connection where only that is known (`bindServername`). */
export function connectionServername(req: Request): string | undefined {
  return servernames.get(req);
}
