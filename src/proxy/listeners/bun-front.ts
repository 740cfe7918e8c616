/**
 * The server of one listener on `--front bun`: Bun.serve, except where Bun.serve cannot serve what the
 * listener must (docs/http.md). Bun.serve's HTTP/2 has no trailer fields, which carry a gRPC call's
 * status, so a listener that serves GRPCRoutes gets a node:http2 server for its HTTP/2: over TLS the
 * HTTPS listener of h2/listener.ts (also with `--http2`), in cleartext h2/cleartext-listener.ts, which
 * keeps HTTP/1.1 on Bun.serve. Any other plain listener is Bun.serve, h2c included.
 */
import type { ServerWebSocket } from "bun";
import { H2cListener } from "../h2/cleartext-listener.ts";
import { H2Listener } from "../h2/listener.ts";
import type { ServingSocket } from "../raw-front/front.ts";
import { takeRelayedClient } from "../request/client-address.ts";
import { failedResponse } from "../request/response-failure.ts";
import { type ProxiedSocket, type ProxyServer, websocketHandler } from "../request/websocket/relay.ts";
import type { ListenerState } from "../settings.ts";
import type { ListenerTable } from "../table.ts";
import type { ListenerApp } from "./app.ts";
import { headRefusal } from "./head-limits.ts";
import { offersHttp2, servesGrpc } from "./listener-identity.ts";
import { sniEntries } from "./tls.ts";

export interface BunFrontListener {
  readonly server: ServingSocket;
  /** Its HTTP/2 is served by node:http2 (for the "listener open" log line). */
  readonly http2: boolean;
}

/** Opens `lt`'s server on `hostname`:`port`; throws when the port cannot be bound. */
export function openOnBunFront(
  lt: ListenerTable,
  hostname: string,
  port: number,
  state: ListenerState,
  app: ListenerApp,
  sockets: Set<ServerWebSocket<ProxiedSocket>>,
  http2Flag: boolean,
): BunFrontListener {
  const { idleTimeoutSeconds, serverHeader, headLimits } = state.settings;
  const websocket = websocketHandler(sockets);
  const error = (err: Error) => failedResponse(err, lt.name, serverHeader);
  // Bun.serve's SNI table (the raw front's node:tls listener builds its own contexts).
  const tls =
    lt.protocol === "HTTPS"
      ? sniEntries(lt.name, lt.tls?.certificates ?? [], lt.tls?.clientValidation)
      : undefined;
  if (tls !== undefined && offersHttp2(lt, http2Flag, "bun")) {
    const upgrades = {
      idleTimeout: idleTimeoutSeconds,
      development: false,
      fetch: (req: Request, srv: ProxyServer) => {
        takeRelayedClient(req);
        return app.fetch(req, srv);
      },
      websocket,
    };
    const server = new H2Listener({ hostname, port, state, app, idleTimeoutSeconds, upgrades });
    return { server, http2: true };
  }
  if (tls === undefined && servesGrpc(lt))
    return { server: new H2cListener({ hostname, port, state, app, websocket, error }), http2: true };
  const server = Bun.serve<ProxiedSocket>({
    hostname,
    port,
    // Worker processes (`--workers`) share the traffic ports; a replaced server binds beside the old one.
    reusePort: true,
    tls,
    // Plain HTTP: h2c with prior knowledge too (Bun 1.4's `http2`, measured; docs/performance.md).
    // Not over TLS, where HTTP/2 stays behind `--http2` (h2/listener.ts).
    http2: tls === undefined,
    idleTimeout: idleTimeoutSeconds,
    development: false,
    fetch: (req, srv) => headRefusal(req, headLimits, serverHeader) ?? app.fetch(req, srv),
    websocket,
    error,
  });
  return { server, http2: false };
}
