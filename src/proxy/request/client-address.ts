/**
 * The client's address as the request path sees it. Behind the raw-socket front (src/proxy/raw-front/),
 * routes the front does not serve itself reach the listener's Bun.serve app over a private unix
 * socket, where `requestIP` says nothing useful; the front then names the client in RELAYED_CLIENT_HEADER
 * (always overwriting whatever a client sent under that name). Only the internal listener reads it
 * (`takeRelayedClient`): on a public listener the header means nothing and is passed on like any other.
 */
import type { ProxyServer } from "./websocket/relay.ts";

export const RELAYED_CLIENT_HEADER = "x-gatehouse-relayed-client";

const relayed = new WeakMap<Request, string>();

/** Internal listener only: moves the front's header out of `req` into the address `clientAddress` gives. */
export function takeRelayedClient(req: Request): void {
  const ip = req.headers.get(RELAYED_CLIENT_HEADER);
  if (ip === null) return;
  req.headers.delete(RELAYED_CLIENT_HEADER);
  relayed.set(req, ip);
}

/** The client's IP address ("" when unknown). */
export function clientAddress(req: Request, srv: ProxyServer): string {
  return relayed.get(req) ?? srv.requestIP(req)?.address ?? "";
}
