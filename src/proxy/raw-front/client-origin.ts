/**
 * Who the client of one raw-front connection is (client/trusted-proxies.ts has the rules): the peer,
 * looked up once per connection (the socket's address, or the source its PROXY header named), and per
 * request the client, which differs from the peer only when the peer is a trusted proxy and the request
 * carries X-Forwarded-For. On a listener that reads PROXY headers no peer's X-Forwarded-For is believed
 * (settings.ts forwardedForTrust). With no trusted proxies (the default) a request costs one comparison.
 */
import { logger } from "../../observability/logger.ts";
import { PROXY_HEADER_TIMEOUT_SECONDS, type PreambleStep, ProxyPreamble } from "../client/proxy-preamble.ts";
import { normalisePeer, type TrustedProxies } from "../client/trusted-proxies.ts";
import {
  forwardedForTrust,
  type ListenerState,
  listenerReadsProxyHeader,
  proxyHeaderSenders,
} from "../settings.ts";
import type { FrontSocket, PeerOrigin } from "./client-side.ts";
import type { RequestHead } from "./http1/request-head.ts";

const log = logger.child({ component: "proxy" });

export class ClientOrigin implements PeerOrigin {
  private address: string | undefined;
  private trustedPeer = false;
  /** This request's client, when a trusted peer's X-Forwarded-For named another. */
  private current: string | undefined;
  /** Set while the connection's PROXY header is awaited. */
  private preamble: ProxyPreamble | undefined;
  /**
   * The listener reads PROXY headers (the TLS listener's pre-reader read this connection's): no
   * X-Forwarded-For is ever believed, a rate limit's own trusted proxies included.
   */
  viaProxyHeader = false;
  /** The socket's address the connection caps counted it under (front.ts), released under the same. */
  admittedAs = "";

  constructor(
    private readonly socket: FrontSocket,
    /** Whose X-Forwarded-For is believed: none on a PROXY-protocol listener (settings.ts forwardedForTrust). */
    private readonly trusted: TrustedProxies | undefined,
    /** Who may send a PROXY header (settings.ts proxyHeaderSenders); only read when one is expected. */
    private readonly proxySenders: TrustedProxies | undefined = undefined,
  ) {}

  /** The connection's peer, normalised (no port, IPv4-mapped IPv6 as IPv4). */
  get peer(): string {
    if (this.address === undefined) this.setPeer(this.socket.remoteAddress ?? "");
    return this.address as string;
  }

  /** The peer is one of `--trusted-proxies`: its X-Forwarded-For is believed and passed on. */
  get peerTrusted(): boolean {
    return this.peer !== "" && this.trustedPeer;
  }

  /** The current request's client. */
  get client(): string {
    return this.current ?? this.peer;
  }

  /** A new request: a trusted peer's X-Forwarded-For names its client. */
  request(head: RequestHead): void {
    const trusted = this.trusted;
    if (trusted === undefined || trusted.none) return;
    this.current = this.peerTrusted ? trusted.client(this.peer, forwardedForOf(head)) : undefined;
  }

  /**
   * The listener reads a PROXY header first. False when the socket's peer may not send one (it is not in
   * `--proxy-protocol-from`, else `--trusted-proxies`): the caller refuses the connection.
   */
  expectProxyHeader(): boolean {
    const peer = this.peer;
    if (peer === "" || this.proxySenders === undefined || !this.proxySenders.trusts(peer)) return false;
    this.preamble = new ProxyPreamble();
    return true;
  }

  get awaitingProxyHeader(): boolean {
    return this.preamble !== undefined;
  }

  /** The connection's first bytes while `awaitingProxyHeader`; on `done` the header's source is the peer. */
  proxyHeader(chunk: Uint8Array): PreambleStep {
    const step = (this.preamble as ProxyPreamble).feed(chunk);
    if (step.kind === "done") {
      this.preamble = undefined;
      if (step.source !== undefined) this.setPeer(step.source);
    }
    return step;
  }

  private setPeer(address: string): void {
    this.address = normalisePeer(address);
    this.trustedPeer = this.trusted?.trusts(this.address) ?? false;
  }
}

/** A connection's origin on `state`'s listener: whose X-Forwarded-For is believed, who may send PROXY. */
export function listenerOrigin(socket: FrontSocket, state: ListenerState): ClientOrigin {
  const origin = new ClientOrigin(socket, forwardedForTrust(state), proxyHeaderSenders(state.settings));
  origin.viaProxyHeader = listenerReadsProxyHeader(state);
  return origin;
}

/** Every X-Forwarded-For field of the head, joined as Headers joins them; null when none. */
function forwardedForOf(head: RequestHead): string | null {
  let v: string | null = null;
  for (let i = 0; i < head.fieldCount; i++)
    if (head.nameIs(i, "x-forwarded-for")) v = v === null ? head.value(i) : `${v}, ${head.value(i)}`;
  return v;
}

/** What reading a PROXY header needs of a connection (ClientConnection, or a TLS listener's pre-reader). */
export interface ProxiedConnection {
  readonly origin: ClientOrigin;
  readonly socket: { terminate(): void; timeout(seconds: number): void };
}

/**
 * One read of a connection awaiting its PROXY header: the bytes after the header once it is whole
 * (possibly none), undefined while more are needed or when the connection was refused (terminated,
 * counted in `gatehouse_connections_refused_total{reason="proxy_protocol"}`, the reason logged at debug).
 */
export function afterProxyHeader(
  c: ProxiedConnection,
  chunk: Uint8Array,
  state: ListenerState,
): Buffer | undefined {
  const step = c.origin.proxyHeader(chunk);
  if (step.kind === "wait") return undefined;
  if (step.kind === "refused") {
    refuseProxied(c, state, step.reason);
    return undefined;
  }
  c.socket.timeout(state.settings.idleTimeoutSeconds);
  return step.rest;
}

/** The reason a connection that did not send its whole PROXY header in time is refused with. */
export const PROXY_HEADER_LATE = `no whole PROXY header within ${PROXY_HEADER_TIMEOUT_SECONDS} s`;

/** A connection on a PROXY-protocol listener that may not be served: closed before anything is read. */
export function refuseProxied(c: ProxiedConnection, state: ListenerState, reason: string): void {
  state.settings.observer?.connectionRefused?.("proxy_protocol");
  log.debug("connection refused: PROXY protocol", { listener: state.table.name, reason });
  c.socket.terminate();
}

/**
 * A new connection on a listener that reads PROXY headers: false (and refused) when its peer is not a
 * trusted proxy; otherwise it has PROXY_HEADER_TIMEOUT_SECONDS to send the header.
 */
export function awaitProxyHeader(c: ProxiedConnection, state: ListenerState): boolean {
  if (!c.origin.expectProxyHeader()) {
    refuseProxied(c, state, "the peer may not send a PROXY header (--proxy-protocol-from)");
    return false;
  }
  c.socket.timeout(PROXY_HEADER_TIMEOUT_SECONDS);
  return true;
}
