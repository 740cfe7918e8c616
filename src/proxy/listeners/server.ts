/**
 * GatewayServer: the listeners of the current model. With `--front raw` (the default) each is a RawFront
 * (raw sockets; HTTPS through its node:tls listener), with `--front bun` a `Bun.serve` (node:http2 for
 * its HTTP/2 where it serves GRPCRoutes or, over TLS, with `http2`: bun-front.ts); either way a Hono app
 * serves what the fast path does not. `apply()` compiles a
 * model and swaps each listener's table with one assignment; listeners that appear are opened, ones that
 * disappear drain (in-flight requests finish). HTTPS certificates that change are swapped in place on
 * node:tls servers; a Bun.serve HTTPS listener is replaced by a second server on the same port
 * (`reusePort`) before the old one drains, since Bun's `server.reload()` keeps the old certificates
 * (docs/tls.md). Model listeners sharing an address and port are merged into one socket
 * (listener-merge.ts). Open WebSockets are closed (1001) when their listener drains, since Bun's
 * `stop(false)` would otherwise wait for them forever (measured). TLS Passthrough listeners (TLSRoutes)
 * are raw sockets routed by SNI (passthrough/), opened before an apply commits, their tables swapped,
 * and drained with the others; with `sharedTlsPorts` one may share its port with an HTTPS listener.
 */
import type { Duplex } from "node:stream";
import type { ServerWebSocket } from "bun";
import { DEFAULT_REQUEST_HEAD_LIMITS } from "../../model/http-syntax.ts";
import type { GatewayModel, Route } from "../../model/index.ts";
import { logger } from "../../observability/logger.ts";
import { TrustedProxies } from "../client/trusted-proxies.ts";
import { compile } from "../compile.ts";
import { useOwnErrorBodies } from "../error-pages/own-bodies.ts";
import { H2Listener } from "../h2/listener.ts";
import { PassthroughListeners } from "../passthrough/listeners.ts";
import { ConnectionAdmission } from "../raw-front/admission.ts";
import { RawFront, type ServingSocket } from "../raw-front/front.ts";
import { takeRelayedClient } from "../request/client-address.ts";
import { takeRelayedTls } from "../request/client-tls.ts";
import { failedResponse } from "../request/response-failure.ts";
import { closeH2cSessions } from "../request/upstream-h2c.ts";
import { type ProxiedSocket, websocketHandler } from "../request/websocket/relay.ts";
import type { ListenerState, ProxySettings } from "../settings.ts";
import type { ListenerTable } from "../table.ts";
import { createListenerApp } from "./app.ts";
import { openOnBunFront } from "./bun-front.ts";
import {
  proxyProtocolFromWarning,
  proxyProtocolRefusal,
  unenforcedOnBunFront,
  unmatchedProxyProtocolPorts,
} from "./front-settings.ts";
import { setBunHeadLimit } from "./head-limits.ts";
import { http2Refusal, identityOf, offersHttp2, sameShape } from "./listener-identity.ts";
import { groupListeners } from "./listener-merge.ts";
import { defaultFront, type FrontKind, type GatewayServerOptions } from "./server-options.ts";
import { listenerMigrationEnabled } from "./tls.ts";

const log = logger.child({ component: "proxy" });

const DEFAULT_MAX_CONNECTIONS = 16_384;

interface LiveListener {
  readonly key: string;
  readonly server: ServingSocket;
  readonly state: ListenerState;
  /** Proxied WebSockets open on this server. */
  readonly sockets: Set<ServerWebSocket<ProxiedSocket>>;
  /** Protocol and certificates the server was started with; a change means a new server. */
  readonly identity: string;
}

export class GatewayServer {
  private readonly bind: string;
  private readonly settings: ProxySettings;
  private readonly live = new Map<string, LiveListener>();
  /** Listeners closing (removed by a reload or by stop()), until they have closed. */
  private readonly draining = new Map<LiveListener, Promise<void>>();
  private readonly front: FrontKind;
  private readonly http2: boolean;
  private readonly sharedTlsPorts: boolean;
  /** TLS Passthrough (TLSRoutes, by SNI), TCP and UDP listeners: raw sockets beside the HTTP ones. */
  readonly passthrough: PassthroughListeners;
  /** The `--proxy-protocol` ports last warned about as matching no listener (warned again on change). */
  private unmatchedProxyPorts = "";

  constructor(options: GatewayServerOptions = {}) {
    this.bind = options.bind ?? "0.0.0.0";
    this.front = options.front ?? defaultFront();
    this.http2 = options.http2 ?? false;
    this.sharedTlsPorts = (options.sharedTlsPorts ?? false) && this.front === "raw";
    this.passthrough = new PassthroughListeners(options);
    if (this.front === "bun")
      for (const flag of unenforcedOnBunFront(options, DEFAULT_MAX_CONNECTIONS))
        log.warn(`${flag} is enforced by --front raw only; with --front bun it has no effect (docs/http.md)`);
    // Bun.serve's head limit is the process's (node:http's maxHeaderSize, read per request).
    if (this.front === "bun") setBunHeadLimit(options.requestHeadLimits ?? DEFAULT_REQUEST_HEAD_LIMITS);
    const proxyProtocolProblem = proxyProtocolRefusal(options, this.front);
    if (proxyProtocolProblem !== undefined) throw new Error(proxyProtocolProblem);
    const proxyProtocolWarning = proxyProtocolFromWarning(options);
    if (proxyProtocolWarning !== undefined) log.warn(proxyProtocolWarning);
    const defaultUpstreamTimeoutMs = options.defaultUpstreamTimeoutMs ?? 60_000;
    this.settings = {
      defaultUpstreamTimeoutMs,
      upstreamReadTimeoutMs: Math.ceil(options.upstreamReadTimeoutMs ?? defaultUpstreamTimeoutMs),
      upstreamSendTimeoutMs: Math.ceil(options.upstreamSendTimeoutMs ?? defaultUpstreamTimeoutMs),
      clientBodyTimeoutSeconds: Math.max(1, Math.ceil((options.clientBodyTimeoutMs ?? 60_000) / 1000)),
      requestBufferBytes: options.requestBufferBytes ?? 64 * 1024,
      underscoresInHeaders: options.underscoresInHeaders ?? false,
      headLimits: options.requestHeadLimits ?? DEFAULT_REQUEST_HEAD_LIMITS,
      admission: new ConnectionAdmission(
        options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
        options.maxConnectionsPerPeer ?? 0,
        (reason) => options.observer?.connectionRefused?.(reason),
      ),
      serverHeader: options.serverHeader ?? "gatehouse",
      // Bun counts a connection waiting for our upstream as idle: allow the upstream timeout and more.
      idleTimeoutSeconds:
        options.idleTimeoutSeconds ??
        Math.min(255, Math.max(75, Math.ceil(defaultUpstreamTimeoutMs / 1000) + 5)),
      ...(options.guards ? { guards: options.guards } : {}),
      ...(options.observer ? { observer: options.observer } : {}),
      ...((options.trustedProxies?.length ?? 0) > 0
        ? { trustedProxies: new TrustedProxies(options.trustedProxies ?? []) }
        : {}),
      ...(options.proxyProtocol !== undefined ? { proxyProtocol: options.proxyProtocol } : {}),
      ...((options.proxyProtocolFrom?.length ?? 0) > 0
        ? { proxyProtocolFrom: new TrustedProxies(options.proxyProtocolFrom ?? []) }
        : {}),
    };
  }

  /** Compiles and serves `model`. Throws (changing nothing) when a new listener cannot bind. */
  async apply(model: GatewayModel): Promise<void> {
    const table = compile(model);
    useOwnErrorBodies(model.errorBodies);
    for (const warning of table.warnings) log.warn("route table warning", { warning });
    const ports = [...model.listeners, ...(model.passthroughListeners ?? [])].map((l) => l.port);
    const unmatched = unmatchedProxyProtocolPorts(this.settings.proxyProtocol, ports).join(",");
    if (unmatched !== this.unmatchedProxyPorts && unmatched !== "")
      log.warn("--proxy-protocol names ports no listener has: nothing reads a PROXY header there", {
        ports: unmatched,
      });
    this.unmatchedProxyPorts = unmatched;
    // Never silent: Bun.serve shows no client certificate, so such routes answer 500 (auth/client-certificate.ts).
    if (this.front !== "raw")
      for (const l of model.listeners)
        if (l.virtualHosts.some((vh) => vh.routes.some(checksClientCertificates)))
          log.error("routes demanding client certificates answer 500: --front bun cannot check them", {
            listener: l.name,
          });
    const servable = table.listeners.filter((lt) => {
      if (lt.protocol === "HTTPS" && (lt.tls?.certificates.length ?? 0) === 0) {
        log.error("HTTPS listener without certificates is not opened", { listener: lt.name });
        return false;
      }
      // Never open: a listener that must verify client certificates is not served by a server that
      // cannot (the HTTP/2 listener of --front bun --http2; Bun.serve and the raw front can).
      if (lt.tls?.clientValidation !== undefined && this.front !== "raw" && this.http2) {
        log.error(
          "client certificate validation is not served by --front bun with --http2: listener not opened",
          { listener: lt.name },
        );
        return false;
      }
      const why = http2Refusal(lt, this.http2, this.front); // never silent: gRPC cannot be served there
      if (why !== undefined) log.error(why, { listener: lt.name });
      return true;
    });
    const wanted = groupListeners(servable, this.bind, (warning) =>
      log.warn("listeners sharing a socket", { warning }),
    );
    const https = new Set([...wanted].filter(([, lt]) => lt.protocol === "HTTPS").map(([key]) => key));
    const share = this.sharedTlsPorts
      ? (key: string) => (https.has(key) ? () => this.handoffTo(key) : undefined)
      : undefined;
    const passthrough = await this.passthrough.prepare(
      model,
      this.bind,
      new Set(wanted.keys()),
      share,
      this.settings,
    );
    const portOf = (key: string, lt: ListenerTable) =>
      passthrough.shared.has(key) ? (passthrough.portOf(key) ?? lt.port) : (lt.bindPort ?? lt.port);
    const identity = (key: string, lt: ListenerTable) =>
      identityOf(lt, passthrough.shared.has(key), this.front);
    const opened: LiveListener[] = [];
    const replaced: LiveListener[] = [];
    const rotated: (() => void)[] = [];
    try {
      for (const [key, lt] of wanted) {
        const cur = this.live.get(key);
        const shared = passthrough.shared.has(key);
        if (cur === undefined) opened.push(this.open(key, lt, portOf(key, lt), shared));
        else if (cur.identity !== identity(key, lt)) {
          // The node:tls listeners (raw front, HTTP/2) swap certificates in place: no second socket, so
          // nothing queued is reset. Only the certificates may differ for that.
          if (swapsInPlace(cur.server) && sameShape(cur.identity, identity(key, lt))) {
            const commit = cur.server.prepareCertificates(
              lt.tls?.certificates ?? [],
              lt.tls?.clientValidation,
            );
            rotated.push(() => {
              commit();
              this.live.set(key, { ...cur, identity: identity(key, lt) });
            });
            continue;
          }
          // The same protocol binds beside the old server (HTTPS; on --front bun a plain listener that gains
          // or loses GRPCRoutes); a protocol change must not share the port even briefly.
          if (cur.identity.split("\n")[0] !== lt.protocol) await this.close(cur, true);
          else warnWithoutMigration();
          replaced.push(this.open(key, lt, shared ? portOf(key, lt) : cur.state.boundPort, shared));
        }
      }
    } catch (err) {
      for (const l of [...opened, ...replaced]) l.server.stop(true);
      passthrough.abort();
      throw err;
    }
    passthrough.commit();
    for (const commit of rotated) commit();
    for (const [key, lt] of wanted) {
      const cur = this.live.get(key);
      if (cur !== undefined) cur.state.table = lt;
    }
    for (const l of replaced) {
      const old = this.live.get(l.key);
      this.live.set(l.key, l);
      if (old !== undefined) void this.close(old, false);
    }
    for (const l of opened) this.live.set(l.key, l);
    for (const [key, l] of this.live) {
      if (!wanted.has(key)) {
        this.live.delete(key);
        void this.close(l, false);
      }
    }
  }

  /** Requests being served right now across every listener (Bun's own count). */
  pendingRequests(): number {
    let n = 0;
    for (const l of this.live.values()) n += l.server.pendingRequests;
    return n;
  }

  /** Client connections open on the listeners that can count them (the raw front's plain-HTTP ones). */
  openConnections(): number {
    let n = 0;
    for (const l of this.live.values()) n += l.server.openConnections ?? 0;
    return n + this.passthrough.openConnections();
  }

  /** Bound sockets, for tests and logs (a model port of 0 shows the port actually bound). */
  ports(): { listener: string; address: string; port: number }[] {
    return [
      ...[...this.live.values()].map((l) => ({
        listener: l.state.table.name,
        address: l.server.hostname ?? "",
        port: l.state.boundPort,
      })),
      ...this.passthrough.ports(),
    ];
  }

  /**
   * Stops accepting, lets in-flight requests finish, resolves when every listener is closed. `force`
   * cuts open connections instead, also those of listeners already draining (a graceful stop() that
   * ran past its deadline is ended by calling stop(true)).
   */
  async stop(force = false): Promise<void> {
    const all = [...this.live.values()];
    this.live.clear();
    if (force) for (const l of this.draining.keys()) void l.server.stop(true);
    await Promise.all([...all.map((l) => this.close(l, force)), this.passthrough.stop(force)]);
    await Promise.all(this.draining.values());
    closeH2cSessions();
  }

  /** The HTTPS listener a shared passthrough socket hands connections to (raw front). */
  private handoffTo(key: string): ((stream: Duplex) => void) | undefined {
    const server = this.live.get(key)?.server;
    return server instanceof RawFront && server.secure ? (s) => server.acceptShared(s) : undefined;
  }

  /** `shared`: the port belongs to a passthrough listener that hands connections over (raw front). */
  private open(key: string, lt: ListenerTable, port: number, shared = false): LiveListener {
    const state: ListenerState = { table: lt, boundPort: port, settings: this.settings };
    const app = createListenerApp(state);
    const serverHeader = this.settings.serverHeader;
    const sockets = new Set<ServerWebSocket<ProxiedSocket>>();
    if (this.front === "raw") {
      // The app still serves what the raw front does not: on a private socket, told the client's address.
      const secure =
        lt.protocol === "HTTPS" && lt.tls !== undefined
          ? {
              certificates: lt.tls.certificates,
              http2: offersHttp2(lt, this.http2, this.front),
              bind: !shared,
              ...(lt.tls.clientValidation ? { clientValidation: lt.tls.clientValidation } : {}),
              // Scanners and broken clients fail handshakes all day: a metric and a debug line, not a warning.
              onHandshakeError: (reason: string) => {
                this.settings.observer?.tlsHandshakeFailed?.(state.table.name, reason);
                log.debug("TLS handshake failed", { listener: state.table.name, reason });
              },
            }
          : undefined;
      const server = new RawFront(
        lt.address || this.bind,
        port,
        state,
        app,
        {
          idleTimeout: this.settings.idleTimeoutSeconds,
          development: false,
          fetch: (req, srv) => {
            takeRelayedClient(req);
            takeRelayedTls(req);
            return app.fetch(req, srv);
          },
          websocket: websocketHandler(sockets),
          error: (err) => failedResponse(err, lt.name, serverHeader),
        },
        secure,
      );
      state.boundPort = server.port;
      log.info("listener open", {
        listener: lt.name,
        address: server.hostname,
        port: state.boundPort,
        ...(shared ? { sharedWithPassthrough: true } : {}),
      });
      return { key, server, state, sockets, identity: identityOf(lt, shared, this.front) };
    }
    const hostname = lt.address || this.bind;
    const opened = openOnBunFront(lt, hostname, port, state, app, sockets, this.http2);
    const server = opened.server;
    state.boundPort = server.port ?? port;
    log.info("listener open", {
      listener: lt.name,
      address: server.hostname,
      port: state.boundPort,
      ...(opened.http2 ? { http2: true } : {}),
    });
    return { key, server, state, sockets, identity: identityOf(lt, false, this.front) };
  }

  private close(l: LiveListener, now: boolean): Promise<void> {
    for (const ws of l.sockets) ws.close(1001, "listener closing");
    const done = l.server.stop(now).then(
      () => log.info("listener closed", { listener: l.state.table.name, port: l.state.boundPort }),
      (err: unknown) =>
        log.warn("listener close failed", { listener: l.state.table.name, error: String(err) }),
    );
    this.draining.set(l, done);
    void done.finally(() => {
      if (this.draining.get(l) === done) this.draining.delete(l);
    });
    return done;
  }
}

/** A route whose client-certificate demand needs the handshake (ingress-nginx auth-tls-*, not `off`). */
function checksClientCertificates(r: Route): boolean {
  const d = r.clientCertificate;
  return d !== undefined && d.refused === undefined && (d.verify !== "off" || d.matchCN !== undefined);
}

/** Servers whose certificates rotate in place (node:tls underneath). */
function swapsInPlace(server: ServingSocket): server is H2Listener | RawFront {
  return server instanceof H2Listener || (server instanceof RawFront && server.secure);
}

let migrationChecked = false;

/** Once per process, on the first certificate rotation: say when queued connections can be reset. */
function warnWithoutMigration(): void {
  if (migrationChecked) return;
  migrationChecked = true;
  if (listenerMigrationEnabled() === false)
    log.warn(
      "net.ipv4.tcp_migrate_req is 0: a certificate rotation may reset connections that arrive during the swap (docs/tls.md)",
    );
}
