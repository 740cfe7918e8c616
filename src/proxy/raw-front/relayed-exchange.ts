/**
 * The slow path: a request on a route the fast path does not serve (guards, redirects, mirrors, CORS,
 * h2c, WebSocket upgrades, invalid backends, …) is relayed, nearly byte for byte, to the listener's own
 * Bun.serve + Hono app listening on a private unix socket, and the answer relayed back (after a 101,
 * both directions become a tunnel). So every feature behaves exactly as on the Bun front, with one
 * addition: the connection's peer travels in RELAYED_CLIENT_HEADER (and, for a route that checks client
 * certificates, the TLS session in RELAYED_TLS_HEADER), which the internal listener trusts. The app does its own metrics and access log for these requests.
 */

import type { RouteTimeouts } from "../../model/index.ts";
import { limitedLog } from "../../observability/log-limit.ts";
import { RELAYED_CLIENT_HEADER, RELAYED_PROTOCOL_HEADER } from "../request/client-address.ts";
import { RELAYED_TLS_HEADER, relayedTlsValue } from "../request/client-tls.ts";
import { limit } from "../request/forward.ts";
import type { ClientSide, TlsSession } from "./client-side.ts";
import { framing, type UpstreamRequest } from "./http1/head-to-upstream.ts";
import type { RequestHead } from "./http1/request-head.ts";
import { UpstreamExchange } from "./upstream/exchange.ts";
import { NO_LIMITS } from "./upstream/exchange-limits.ts";

/** Never copied: framing we redo, this hop's connection fields, and our own header. */
const DROP: ReadonlySet<string> = new Set([
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "expect",
  RELAYED_CLIENT_HEADER,
  RELAYED_PROTOCOL_HEADER,
  RELAYED_TLS_HEADER,
]);

let relayed = 0;

/** Requests relayed since the process started: tests show what the front serves itself adds none. */
export function relayedCount(): number {
  return relayed;
}

export class RelayedExchange extends UpstreamExchange {
  constructor(
    conn: ClientSide,
    head: RequestHead,
    private readonly endpoint: string,
    /** The route's own time limits, when the request matched one (the app applies the rest). */
    timeouts?: RouteTimeouts,
    /**
     * Relay the TLS session: only for a route with a client-certificate demand, the one reader of it.
     * Elsewhere the client's chain, which it can make as large as it likes, has no business in the head.
     */
    private readonly relayTls = false,
  ) {
    // The app applies the route's limits to response headers; the front adds the read and send gaps, which
    // the app's fetch cannot (a stalled upstream stalls the app: cutting it cancels the app's fetch).
    const settings = conn.state0.settings;
    const limits = {
      ...NO_LIMITS,
      readGapMs: limit(timeouts?.readGapMs ?? settings.upstreamReadTimeoutMs),
      sendGapMs: limit(timeouts?.sendGapMs ?? settings.upstreamSendTimeoutMs),
    };
    super(conn, head, limits, []);
    relayed++;
    this.start();
  }

  protected pickEndpoint(): string {
    return this.endpoint;
  }

  /** The internal listener is on this host: cleartext over a unix socket. */
  protected upstreamTLS(): undefined {
    return undefined;
  }

  protected requestHead(): UpstreamRequest {
    const tls = this.relayTls ? this.conn.tls : undefined;
    return { head: internalHead(this.head, this.conn.origin.peer, tls), requestId: "" };
  }

  protected headersArrived(): void {}

  /** Never called: the internal listener's connections are not capped (the app counts its own). */
  protected overCap(): void {
    this.fail(503);
  }

  protected observe(): void {}

  protected attemptFailed(_timedOut: boolean, _attempt: number, error: string): void {
    const listener = this.conn.state0.table.name;
    limitedLog("error", listener, "internal listener unreachable", { listener, error });
  }
}

/**
 * The client's head for the internal listener, as latin1 text (UpstreamRequest.head): request line and
 * fields as sent, except the framing (ours, matching the bytes we relay) and the Connection field, whose
 * tokens stay (so the app still drops the fields they name, and sees an upgrade) minus `close`: the
 * internal connection is reused.
 */
export function internalHead(head: RequestHead, peer: string, tls?: TlsSession): string {
  const { rawNames, names, values } = head;
  let out = `${head.method} ${head.target} HTTP/1.${head.http10 ? 0 : 1}\r\n`;
  // An absolute-form target arrives here as its origin-form, its authority as the one Host line.
  if (head.hostFromTarget) out += `Host: ${head.host}\r\n`;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (DROP.has(name) || (head.hostFromTarget && name === "host")) continue;
    out += `${rawNames[i]}: ${values[i]}\r\n`;
  }
  let connection = "";
  for (const t of head.connection) if (t !== "close" && t !== "keep-alive") connection += `, ${t}`;
  if (head.http10) connection += ", keep-alive";
  if (connection !== "") out += `Connection: ${connection.slice(2)}\r\n`;
  out += `${RELAYED_CLIENT_HEADER}: ${peer}\r\n`;
  if (head.http10) out += `${RELAYED_PROTOCOL_HEADER}: HTTP/1.0\r\n`;
  if (tls !== undefined) {
    const session = { servername: tls.servername, authorized: tls.authorized, chain: tls.peerCertificates() };
    out += `${RELAYED_TLS_HEADER}: ${relayedTlsValue(session)}\r\n`;
  }
  out += `${framing(head)}\r\n`;
  return out;
}
