/**
 * The client's address as the request path sees it: the connection's peer, and the client a trusted
 * peer's X-Forwarded-For names (client/trusted-proxies.ts), computed the same way on every front.
 * Behind the raw-socket front (src/proxy/raw-front/), routes the front does not serve itself reach the
 * listener's Bun.serve app over a private unix socket, where `requestIP` says nothing useful; the front then names the peer in RELAYED_CLIENT_HEADER
 * (always overwriting whatever a client sent under that name). Only the internal listener reads it
 * (`takeRelayedClient`): on a public listener the header means nothing and is passed on like any other.
 */
import { normalisePeer, type TrustedProxies } from "../client/trusted-proxies.ts";
import { markProtocol } from "./observer.ts";
import type { ProxyServer } from "./websocket/relay.ts";

export const RELAYED_CLIENT_HEADER = "x-gatehouse-relayed-client";

/** Sent with RELAYED_CLIENT_HEADER for an HTTP/1.0 client: its protocol, for the access log (Bun.serve
 * tells no version). */
export const RELAYED_PROTOCOL_HEADER = "x-gatehouse-relayed-protocol";

const relayed = new WeakMap<Request, string>();

/** Internal listener only: moves the front's header out of `req` into the address `clientAddress` gives. */
export function takeRelayedClient(req: Request): void {
  const ip = req.headers.get(RELAYED_CLIENT_HEADER);
  if (ip === null) return;
  req.headers.delete(RELAYED_CLIENT_HEADER);
  relayed.set(req, ip);
  const protocol = req.headers.get(RELAYED_PROTOCOL_HEADER);
  if (protocol === null) return;
  req.headers.delete(RELAYED_PROTOCOL_HEADER);
  if (protocol === "HTTP/1.0") markProtocol(req, protocol);
}

/** A request a listener piped to its Bun.serve (h2/cleartext-listener.ts): `ip` is its client's address. */
export function relayClient(req: Request, ip: string): void {
  relayed.set(req, ip);
}

/** Who sent a request (client/trusted-proxies.ts has the rules). */
export interface RequestClient {
  /** The connection's peer (the socket's address, or the raw front's relayed one), normalised; "" unknown. */
  readonly peer: string;
  /** The peer is one of `--trusted-proxies`: its X-Forwarded-For is believed and passed on. */
  readonly peerTrusted: boolean;
  /** The client: the peer, or the address a trusted peer's X-Forwarded-For names. */
  readonly client: string;
  /** The listener reads PROXY headers: no X-Forwarded-For is believed (a rate limit's own proxies included). */
  readonly forwardedForBarred: boolean;
}

/** The request's peer and client under `trusted` (the listener's `settings.trustedProxies`). */
export function requestClient(
  req: Request,
  srv: ProxyServer,
  trusted: TrustedProxies | undefined,
  forwardedForBarred = false,
): RequestClient {
  const raw = relayed.get(req) ?? srv.requestIP(req)?.address ?? "";
  const peer = raw === "" ? "" : normalisePeer(raw);
  if (trusted === undefined || peer === "" || !trusted.trusts(peer))
    return { peer, peerTrusted: false, client: peer, forwardedForBarred };
  const client = trusted.client(peer, req.headers.get("x-forwarded-for"));
  return { peer, peerTrusted: true, client, forwardedForBarred };
}
