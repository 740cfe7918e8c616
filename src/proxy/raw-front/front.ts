/**
 * RawFront: an HTTP or HTTPS listener served from raw sockets instead of `Bun.serve`, so the common
 * request — routed, forwarded to an HTTP/1.1 backend — costs no Request/Response/Headers objects (the
 * measured cost of the Bun front; docs/performance.md). Plain HTTP listens with `Bun.listen`; HTTPS with
 * a node:tls server (tls/tls-listener.ts: SNI, ALPN, rotation in place), whose HTTP/1.1 connections run
 * through the same connection state machine (tls/tls-client.ts adapts the socket) and whose ALPN `h2`
 * connections go to the HTTP/2 session server. Every other request is relayed to
 * the listener's own Bun.serve app, which listens on a unix socket in a private directory (mode 0700)
 * and is the same app a Bun front would run: one route table (`state`), one feature set. A connection
 * that opens with the HTTP/2 preface (h2c prior knowledge) is served by an in-process node:http2
 * server running that same app (h2/session-server.ts), created on the first such connection.
 *
 * Stop: `stop(false)` stops accepting, closes idle client connections at once and busy ones after
 * their current response, then stops the internal server; `stop(true)` cuts everything.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import type { ServeOptions, Socket, TCPSocketListener, TCPSocketListenOptions } from "bun";
import type { ClientCertificateValidation, TLSCertificate } from "../../model/index.ts";
import { limitedLog } from "../../observability/log-limit.ts";
import { readsProxyHeader } from "../client/proxy-preamble.ts";
import { H2SessionServer } from "../h2/session-server.ts";
import type { ListenerApp } from "../listeners/app.ts";
import type { ProxiedSocket, ProxyServer } from "../request/websocket/relay.ts";
import type { ListenerState } from "../settings.ts";
import { afterProxyHeader, awaitProxyHeader, PROXY_HEADER_LATE, refuseProxied } from "./client-origin.ts";
import { ClientConnection } from "./connection.ts";
import { H2cLink } from "./h2c-handoff.ts";
import { ProxyHeaderListener } from "./tls/proxy-header-listener.ts";
import { adoptHandedPeer, TlsClientSocket } from "./tls/tls-client.ts";
import { TlsListener } from "./tls/tls-listener.ts";
import { upstreamPool } from "./upstream/pool.ts";

/** What server.ts needs of a listener, whichever front serves it (Bun's Server has the same shape). */
export interface ServingSocket {
  readonly hostname: string | undefined;
  readonly port: number | undefined;
  readonly pendingRequests: number;
  /** Client connections open now; absent where the server does not tell (Bun.serve). */
  readonly openConnections?: number;
  stop(now?: boolean): Promise<void>;
}

/** The internal server's options: Bun.serve's, without the address (the front picks a unix socket). */
export type InternalServeOptions = Omit<
  ServeOptions<ProxiedSocket>,
  "hostname" | "port" | "unix" | "reusePort" | "tls"
>;

type ClientSocket = Socket<ClientConnection>;

/** What makes a raw front an HTTPS listener. */
export interface RawFrontTls {
  readonly certificates: readonly TLSCertificate[];
  /** Offer ALPN `h2`: such connections are served by the HTTP/2 session server. */
  readonly http2: boolean;
  readonly clientValidation?: ClientCertificateValidation;
  readonly handshakeTimeoutMs?: number;
  /** false: the port belongs to a passthrough listener that hands connections over (`acceptShared`). */
  readonly bind?: boolean;
  /** Told of each failed handshake, with a short reason (tls-listener.ts `handshakeFailure`). */
  readonly onHandshakeError?: (reason: string) => void;
}

const DIR_PREFIX = "gatehouse-front-";
const liveDirs = new Set<string>();
let swept = false;

/**
 * A private directory (mode 0700) for one internal socket, named after this process. A process that
 * dies without stopping (SIGKILL, drain deadline) leaves its directories behind: the first front of
 * the next process removes those whose process is gone, and an exit hook removes ours.
 */
function socketDir(): string {
  if (!swept) {
    swept = true;
    sweepDeadDirs();
    process.once("exit", () => {
      for (const d of liveDirs) rmSync(d, { recursive: true, force: true });
    });
  }
  const dir = mkdtempSync(join(tmpdir(), `${DIR_PREFIX}${process.pid}-`));
  liveDirs.add(dir);
  return dir;
}

function removeDir(dir: string): void {
  liveDirs.delete(dir);
  rmSync(dir, { recursive: true, force: true });
}

function sweepDeadDirs(): void {
  try {
    for (const name of readdirSync(tmpdir())) {
      if (!name.startsWith(DIR_PREFIX)) continue;
      const pid = Number(name.slice(DIR_PREFIX.length).split("-")[0]);
      if (Number.isInteger(pid) && pid > 0 && !alive(pid))
        rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  } catch {
    // Best effort: a directory we cannot read or remove costs a few bytes, never the start.
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but is someone else's.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function unexpected(state: ListenerState, err: unknown): void {
  const listener = state.table.name;
  limitedLog("error", listener, "unexpected error while serving a request", {
    listener,
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
}

export class RawFront implements ServingSocket {
  private readonly listener: TCPSocketListener<ClientConnection> | undefined;
  private readonly tlsListener: TlsListener | undefined;
  /** HTTPS with `--proxy-protocol`: the socket that reads PROXY headers before the TLS listener. */
  private readonly proxyListener: ProxyHeaderListener | undefined;
  /** HTTP/2 connections over TLS (ALPN h2), until they close. */
  private readonly h2Sockets = new Set<TLSSocket>();
  private readonly internal: ProxyServer;
  private readonly dir: string;
  private readonly endpoint: string;
  private readonly connections = new Set<ClientConnection>();
  private allClosed: (() => void) | undefined;
  private stopping: Promise<void> | undefined;
  private h2c: H2SessionServer | undefined;

  constructor(
    hostname: string,
    port: number,
    private readonly state: ListenerState,
    /** The listener's app, for h2c connections (the same one `internal` serves). */
    private readonly app: ListenerApp,
    internal: InternalServeOptions,
    tls?: RawFrontTls,
  ) {
    this.dir = socketDir();
    const path = join(this.dir, "internal.sock");
    this.endpoint = `unix:${path}`;
    this.internal = Bun.serve<ProxiedSocket>({ ...internal, unix: path } as ServeOptions<ProxiedSocket>);
    // `--proxy-protocol`: every connection starts with a PROXY header (on HTTPS, before the ClientHello).
    const proxied = readsProxyHeader(state.settings.proxyProtocol, state.table.port);
    if (tls !== undefined) {
      try {
        // HTTPS behind PROXY headers: a plain socket reads the header, then hands the TLS bytes over.
        const preread = proxied && tls.bind !== false;
        this.tlsListener = new TlsListener({
          hostname,
          port,
          name: state.table.name,
          ...tls,
          ...(preread ? { bind: false } : {}),
          onConnection: (socket, h2) => this.acceptTls(socket, h2),
          ...(state.settings.admission ? { admission: state.settings.admission } : {}),
        });
        if (preread) {
          const tlsListener = this.tlsListener;
          this.proxyListener = new ProxyHeaderListener(hostname, port, state, (s) => tlsListener.accept(s));
        }
      } catch (err) {
        this.internal.stop(true);
        removeDir(this.dir);
        throw err;
      }
      return;
    }
    try {
      // Bun.listen honours reusePort (measured: two processes bound one port) though its types omit it.
      const options: TCPSocketListenOptions<ClientConnection> & { reusePort: boolean } = {
        hostname,
        port,
        // Worker processes (`--workers`) share the traffic ports.
        reusePort: true,
        // Filled in by `open`; Bun needs a value of the data type here.
        data: undefined as unknown as ClientConnection,
        socket: {
          open: (s: ClientSocket) => {
            const admission = state.settings.admission;
            if (admission !== undefined && !admission.admit(s.remoteAddress)) {
              s.terminate();
              return;
            }
            const c = new ClientConnection(s, state, this.endpoint, this.takeH2c);
            c.origin.admittedAs = s.remoteAddress;
            s.data = c;
            this.connections.add(c);
            if (proxied) awaitProxyHeader(c, state);
            else s.timeout(state.settings.idleTimeoutSeconds);
          },
          data: (s: ClientSocket, chunk: Buffer) => {
            try {
              const c = s.data;
              if (!c.origin.awaitingProxyHeader) c.onData(chunk);
              else {
                const rest = afterProxyHeader(c, chunk, state);
                if (rest !== undefined && rest.length > 0) c.onData(rest);
              }
            } catch (err) {
              // A bug must cost this connection only, never the process or other clients.
              unexpected(state, err);
              s.terminate();
            }
          },
          drain: (s: ClientSocket) => s.data.onDrain(),
          close: (s: ClientSocket) => this.closed(s.data),
          error: (s: ClientSocket) => this.closed(s.data),
          // Idle (keep-alive or slow head): the connection is dropped, as Bun.serve's idleTimeout does.
          timeout: (s: ClientSocket) => {
            if (s.data.origin.awaitingProxyHeader) refuseProxied(s.data, state, PROXY_HEADER_LATE);
            else s.data.onTimeout();
          },
        },
      };
      this.listener = Bun.listen<ClientConnection>(options);
    } catch (err) {
      this.internal.stop(true);
      removeDir(this.dir);
      throw err;
    }
  }

  get hostname(): string {
    return (this.listener ?? this.proxyListener ?? this.tlsListener)?.hostname ?? "";
  }

  get port(): number {
    return (this.listener ?? this.proxyListener ?? this.tlsListener)?.port ?? 0;
  }

  get openConnections(): number {
    return this.connections.size + this.h2Sockets.size;
  }

  /** HTTPS on a port a passthrough listener owns: a connection it hands over (passthrough/handoff.ts). */
  acceptShared(stream: Duplex): void {
    if (this.stopping !== undefined || this.tlsListener === undefined) {
      stream.destroy();
      return;
    }
    this.tlsListener.accept(stream);
  }

  /** An HTTPS listener. */
  get secure(): boolean {
    return this.tlsListener !== undefined;
  }

  /** HTTPS only: see TlsListener.prepareCertificates (throws on a pair OpenSSL refuses). */
  prepareCertificates(
    certs: readonly TLSCertificate[],
    validation?: ClientCertificateValidation,
  ): () => void {
    if (this.tlsListener === undefined) throw new Error("certificates on a plain-HTTP listener");
    return this.tlsListener.prepareCertificates(certs, validation);
  }

  /** Requests being read or answered now (tunnels and idle keep-alive connections not counted). */
  get pendingRequests(): number {
    let n = this.h2c?.pendingRequests ?? 0;
    for (const c of this.connections) if (c.serving) n++;
    return n;
  }

  stop(now = false): Promise<void> {
    this.h2c?.close(now);
    if (now) {
      for (const c of [...this.connections]) c.socket.terminate();
      for (const s of [...this.h2Sockets]) s.destroy();
    }
    if (this.stopping === undefined) this.stopping = this.stopOnce(now);
    return this.stopping;
  }

  private async stopOnce(now: boolean): Promise<void> {
    this.listener?.stop(false);
    this.proxyListener?.stop();
    this.tlsListener?.close();
    if (this.openConnections > 0) {
      const done = new Promise<void>((resolve) => {
        this.allClosed = resolve;
      });
      for (const c of [...this.connections]) c.drain();
      await done;
    }
    upstreamPool.closeIdle(this.endpoint);
    await this.internal.stop(now);
    removeDir(this.dir);
  }

  private readonly takeH2c = (conn: ClientConnection): void => {
    // The front is stopping (the preface came late): no new session, as for a new HTTP/1.1 request.
    if (this.stopping !== undefined) {
      conn.closeWhenFlushed();
      return;
    }
    const link = new H2cLink(conn);
    conn.handOver(link);
    this.sessions().accept(link.stream);
  };

  private sessions(): H2SessionServer {
    if (this.h2c === undefined)
      this.h2c = new H2SessionServer(this.state, this.app, this.tlsListener === undefined ? "http" : "https");
    return this.h2c;
  }

  /** A finished TLS handshake: HTTP/2 by ALPN to the session server, else an HTTP/1.1 connection. */
  private acceptTls(socket: TLSSocket, h2: boolean): void {
    if (this.stopping !== undefined) {
      socket.destroy();
      return;
    }
    adoptHandedPeer(socket);
    const idle = this.state.settings.idleTimeoutSeconds;
    if (h2) {
      this.h2Sockets.add(socket);
      socket.on("close", () => {
        this.h2Sockets.delete(socket);
        this.checkAllClosed();
      });
      socket.setTimeout(idle * 1000, () => socket.destroy());
      this.sessions().accept(socket);
      return;
    }
    const transport = new TlsClientSocket(socket);
    const c = new ClientConnection(transport, this.state, this.endpoint, undefined, transport);
    this.connections.add(c);
    transport.timeout(idle);
    socket.on("data", (chunk: Buffer) => {
      try {
        c.onData(chunk);
      } catch (err) {
        // A bug must cost this connection only, never the process or other clients.
        unexpected(this.state, err);
        socket.destroy();
      }
    });
    socket.on("drain", () => c.onDrain());
    // Idle (keep-alive or slow head): the connection is dropped, as on plain HTTP.
    socket.on("timeout", () => c.onTimeout());
    socket.on("error", () => {}); // a reset client; "close" follows
    socket.on("close", () => this.closed(c));
  }

  private closed(c: ClientConnection | undefined): void {
    if (c === undefined || !this.connections.delete(c)) return;
    // HTTPS connections were admitted by the TLS listener, which releases them itself.
    if (c.tls === undefined) this.state.settings.admission?.release(c.origin.admittedAs);
    c.onClose();
    this.checkAllClosed();
  }

  private checkAllClosed(): void {
    if (this.openConnections === 0) this.allClosed?.();
  }
}
