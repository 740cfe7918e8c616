/**
 * An HTTPS listener that speaks HTTP/2 (ALPN `h2`) and HTTP/1.1 on one port, built on `node:http2` as Bun
 * implements it, since `Bun.serve` negotiates only HTTP/1.1 over TLS (docs/tls.md has the measurements
 * behind this choice). Requests run through the same listener app as on Bun.serve (bridge.ts); the
 * certificate is chosen by SNI from per-name contexts (sni.ts); an HTTP/2 request whose `:authority`
 * belongs to another listener than the handshake's SNI gets 421 (misdirected.ts).
 *
 * It offers what GatewayServer uses of a Bun `Server` (`port`, `hostname`, `pendingRequests`,
 * `stop(now)`). Certificates rotate in place (`prepareCertificates`): `SNICallback` reads the current
 * table on every handshake, so no second socket is needed and nothing queued is reset. WebSocket upgrades
 * over its HTTP/1.1 are relayed to a private Bun.serve (upgrade-relay.ts); without `upgrades`, 501.
 */

import type { IncomingMessage } from "node:http";
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from "node:http2";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import type { ClientCertificateValidation, TLSCertificate } from "../../model/index.ts";
import { logger } from "../../observability/logger.ts";
import type { ListenerApp } from "../listeners/app.ts";
import { bindServername } from "../request/client-tls.ts";
import type { ProxyServer } from "../request/websocket/relay.ts";
import type { ListenerState } from "../settings.ts";
import { serverFacade, writeResponse } from "./bridge.ts";
import { misdirectedOn, misdirectedResponse } from "./misdirected.ts";
import { respondThroughApp } from "./respond.ts";
import { buildSniTable, contextFor, h2ProtocolOptions, type SniTable } from "./sni.ts";
import { type RelayServeOptions, UpgradeRelay } from "./upgrade-relay.ts";

const log = logger.child({ component: "proxy-h2" });

export interface H2ListenerOptions {
  readonly hostname: string;
  readonly port: number;
  readonly state: ListenerState;
  /** The listener's app (the request path shared with Bun.serve listeners). */
  readonly app: ListenerApp;
  readonly idleTimeoutSeconds: number;
  /** The private Bun.serve that takes HTTP/1.1 upgrades (WebSocket); absent: they are answered 501. */
  readonly upgrades?: RelayServeOptions;
}

export class H2Listener {
  readonly hostname: string;
  readonly port: number;
  pendingRequests = 0;
  private readonly server: Http2SecureServer;
  private sni: SniTable;
  private readonly sessions = new Set<ServerHttp2Session>();
  /** HTTP/1.1 connections and the requests in flight on each. */
  private readonly h1 = new Map<TLSSocket, number>();
  private stopping = false;
  private readonly closed: Promise<void>;
  private markClosed: () => void = () => {};
  private readonly app: ListenerApp;
  /** The TLS socket each bridged Request came on (client address for the request path). */
  private readonly sockets = new WeakMap<Request, TLSSocket>();
  private readonly facade: ProxyServer;
  private readonly relay: UpgradeRelay | undefined;

  /** Binds at once; throws (nothing left open) when the port cannot be bound, as `Bun.serve` does. */
  constructor(private readonly options: H2ListenerOptions) {
    const { state } = options;
    this.app = options.app;
    this.facade = serverFacade((r) => this.sockets.get(r));
    const certs = state.table.tls?.certificates ?? [];
    this.sni = buildSniTable(state.table.name, certs);
    const first = certs[0];
    this.server = createSecureServer(
      {
        ...h2ProtocolOptions,
        // Clients without SNI get the first certificate; SNICallback answers every named handshake.
        ...(first ? { cert: first.certPem, key: first.keyPem } : {}),
        allowHTTP1: true,
        SNICallback: (name, cb) => cb(null, contextFor(this.sni, name)),
      },
      (req, res) => this.serve(req, res),
    );
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
    this.server.setTimeout(options.idleTimeoutSeconds * 1000);
    this.server.on("session", (s) => this.trackSession(s));
    this.server.on("secureConnection", (s: TLSSocket) => {
      if (s.alpnProtocol === "h2") return;
      this.h1.set(s, 0);
      s.on("close", () => {
        this.h1.delete(s);
        this.checkClosed();
      });
    });
    this.relay = options.upgrades ? new UpgradeRelay(options.upgrades) : undefined;
    this.server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const tls = socket as TLSSocket;
      // From here the connection is a tunnel: the relay owns it, stop() no longer treats it as idle.
      this.h1.delete(tls);
      if (this.relay === undefined || this.stopping) {
        socket.end("HTTP/1.1 501 Not Implemented\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        return;
      }
      this.relay.relay(req, socket, tls.remoteAddress ?? "", head);
    });
    this.server.on("error", (err) =>
      log.error("listener error", { listener: state.table.name, error: err.message }),
    );
    this.server.listen({ port: options.port, host: options.hostname, reusePort: true });
    // Bun binds synchronously: no address now means the bind failed (the error event follows).
    const addr = this.server.address();
    if (addr === null || typeof addr === "string") {
      this.server.close();
      throw new Error(`HTTPS listener ${state.table.name}: cannot bind ${options.hostname}:${options.port}`);
    }
    this.hostname = addr.address;
    this.port = addr.port;
  }

  /**
   * Checks `certs` (throws on a pair OpenSSL refuses) and returns the swap to run once the rest of the
   * configuration is in place: new handshakes get the new certificates, connections open keep theirs.
   */
  prepareCertificates(
    certs: readonly TLSCertificate[],
    validation?: ClientCertificateValidation,
  ): () => void {
    // Never opened with client validation (GatewayServer refuses it): it must not arrive by rotation either.
    if (validation !== undefined)
      throw new Error(
        `HTTP/2 listener ${this.options.state.table.name}: client certificates are not checked here`,
      );
    const table = buildSniTable(this.options.state.table.name, certs);
    const first = certs[0] as TLSCertificate; // buildSniTable refuses an empty list
    return () => {
      this.sni = table;
      this.server.setSecureContext({ ...h2ProtocolOptions, cert: first.certPem, key: first.keyPem });
    };
  }

  /** Stops accepting; `now` resets every connection, otherwise in-flight requests finish first. */
  stop(now = false): Promise<void> {
    this.stopping = true;
    this.server.close();
    for (const s of this.sessions) {
      if (now) s.destroy();
      else s.close(); // GOAWAY: streams in flight finish, then the session closes
    }
    for (const [socket, inflight] of this.h1) if (now || inflight === 0) socket.destroy();
    this.checkClosed();
    return Promise.all([this.closed, this.relay?.stop(now)]).then(() => {});
  }

  private trackSession(s: ServerHttp2Session): void {
    this.sessions.add(s);
    s.on("close", () => {
      this.sessions.delete(s);
      this.checkClosed();
    });
    s.on("error", () => {}); // a reset client; the session closes and is untracked above
    if (this.stopping) s.close();
  }

  private checkClosed(): void {
    if (this.stopping && this.sessions.size === 0 && this.h1.size === 0) this.markClosed();
  }

  private serve(req: Http2ServerRequest, res: Http2ServerResponse): void {
    const { state } = this.options;
    const serverHeader = state.settings.serverHeader;
    const h2 = req.httpVersionMajor === 2;
    const socket = req.socket as TLSSocket;
    const authority = (h2 ? (req.headers[":authority"] ?? req.headers.host) : req.headers.host) ?? "";
    // Aborted when the client goes away first: cancels the upstream request and stops the response.
    const ctrl = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) ctrl.abort();
    });
    if (h2 && misdirectedOn(state.table, socket.servername, authority)) {
      void writeResponse(res, misdirectedResponse(serverHeader), false, ctrl.signal);
      return;
    }
    const h1Socket = h2 ? undefined : socket;
    if (h1Socket !== undefined) this.h1.set(h1Socket, (this.h1.get(h1Socket) ?? 0) + 1);
    this.pendingRequests++;
    void this.respond(req, res, authority, socket, ctrl.signal).finally(() => {
      this.pendingRequests--;
      if (h1Socket === undefined) return;
      const left = (this.h1.get(h1Socket) ?? 1) - 1;
      if (this.h1.has(h1Socket)) this.h1.set(h1Socket, left);
      if (this.stopping && left === 0) h1Socket.destroy();
    });
  }

  private respond(
    req: Http2ServerRequest,
    res: Http2ServerResponse,
    authority: string,
    socket: TLSSocket,
    signal: AbortSignal,
  ): Promise<void> {
    const target = {
      app: this.app,
      state: this.options.state,
      facade: this.facade,
      scheme: "https" as const,
      bind: (r: Request) => {
        this.sockets.set(r, socket);
        bindServername(r, socket.servername); // client-certificate guards: 421 for another host
      },
    };
    return respondThroughApp(target, req, res, authority, signal);
  }
}
