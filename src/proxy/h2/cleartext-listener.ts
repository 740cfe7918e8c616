/**
 * A plain-HTTP listener of `--front bun` that serves GRPCRoutes. Bun.serve's own h2c sends no trailer
 * fields, and gRPC puts a call's status in them (docs/http.md), so here `Bun.listen` owns the port and
 * reads each connection's first bytes: one that opens with the HTTP/2 preface (h2c with prior knowledge,
 * RFC 9113 §3.3) is served by the node:http2 session server (session-server.ts), which relays trailers
 * both ways, as on the raw front; any other is piped byte for byte to the listener's Bun.serve on a
 * private loopback port, so HTTP/1.1 (WebSocket included) is served exactly as on the front's other
 * listeners, at the cost of one more hop (docs/performance.md). That Bun.serve sees the pipe as its peer:
 * the client's address is found by the pipe's local address and port (no other connection can have both
 * while the pipe is open), and a connection no pipe made is refused.
 *
 * Stop: stops accepting, sends GOAWAY to h2c sessions and lets Bun.serve finish its requests; each pipe
 * closes with its connection. `stop(true)` cuts everything.
 */
import type { Socket, TCPSocketListener, TCPSocketListenOptions, WebSocketHandler } from "bun";
import { limitedLog } from "../../observability/log-limit.ts";
import type { ListenerApp } from "../listeners/app.ts";
import { HandedClient } from "../passthrough/handoff.ts";
import { concat, flush, newStreamStats, type Pipe, relay } from "../passthrough/pipe.ts";
import { relayClient } from "../request/client-address.ts";
import { textResponse } from "../request/responses.ts";
import type { ProxiedSocket, ProxyServer } from "../request/websocket/relay.ts";
import type { ListenerState } from "../settings.ts";
import { H2SessionServer } from "./session-server.ts";

/** RFC 9113 §3.4: every HTTP/2 connection opens with these 24 bytes. */
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export interface H2cListenerOptions {
  readonly hostname: string;
  readonly port: number;
  readonly state: ListenerState;
  readonly app: ListenerApp;
  /** The Bun.serve handlers of the front's plain listeners (server.ts), for the HTTP/1.1 side. */
  readonly websocket: WebSocketHandler<ProxiedSocket>;
  readonly error: (err: Error) => Response;
}

/** Whether `bytes` open with the HTTP/2 preface: false at the first byte that differs, undefined while too few. */
function opensWithPreface(bytes: Uint8Array): boolean | undefined {
  const n = Math.min(bytes.length, PREFACE.length);
  for (let i = 0; i < n; i++) if (bytes[i] !== PREFACE[i]) return false;
  return bytes.length >= PREFACE.length ? true : undefined;
}

export class H2cListener {
  private readonly listener: TCPSocketListener<Pipe>;
  private readonly internal: ProxyServer;
  private readonly pipes = new Set<Pipe>();
  /** The client of each pipe, by the local `address:port` of the pipe's connection to `internal`. */
  private readonly peers = new Map<string, string>();
  /** What pipe.ts counts per pipe; not published (the front's other listeners have no such counters). */
  private readonly stats = newStreamStats();
  private h2c: H2SessionServer | undefined;
  private stopped: Promise<void> | undefined;
  private stopping = false;
  private allClosed: (() => void) | undefined;

  /** Binds at once; throws (nothing left open) when the port cannot be bound, as `Bun.serve` does. */
  constructor(private readonly options: H2cListenerOptions) {
    const { state, app } = options;
    const serverHeader = state.settings.serverHeader;
    this.internal = Bun.serve<ProxiedSocket>({
      hostname: "127.0.0.1",
      port: 0,
      idleTimeout: state.settings.idleTimeoutSeconds,
      development: false,
      fetch: (req, srv) => {
        const ip = srv.requestIP(req);
        const peer = ip === null ? undefined : this.peers.get(`${ip.address}:${ip.port}`);
        // Only the pipes of this listener reach the app here, with their client's address.
        if (peer === undefined) return textResponse(403, "Forbidden\n", serverHeader);
        relayClient(req, peer);
        return app.fetch(req, srv);
      },
      websocket: options.websocket,
      error: options.error,
    });
    // Bun.listen honours reusePort (raw-front/front.ts measured it) though its types omit it.
    const listenOptions: TCPSocketListenOptions<Pipe> & { reusePort: boolean } = {
      hostname: options.hostname,
      port: options.port,
      // Worker processes (`--workers`) share the traffic ports; a replaced listener binds beside this one.
      reusePort: true,
      // A FIN from the client is passed on once its bytes are, not turned into a close.
      allowHalfOpen: true,
      data: undefined as unknown as Pipe,
      socket: {
        open: (s) => this.opened(s),
        data: (s, chunk) => this.guard(s.data, () => this.fromClient(s.data, chunk)),
        drain: (s) =>
          this.guard(s.data, () => (s.data.handed ? s.data.handed.drained() : flush(s.data, "client"))),
        end: (s) => this.guard(s.data, () => this.ended(s.data, "client")),
        close: (s) => this.sideClosed(s.data, "client"),
        error: (s) => this.close(s.data),
        // Silent before its first bytes, or an h2c connection idle: closed, as Bun.serve's idleTimeout does.
        // A piped connection is Bun.serve's to time out.
        timeout: (s) => {
          if (s.data.phase !== "piping" && s.data.phase !== "connecting") this.close(s.data);
        },
      },
    };
    try {
      this.listener = Bun.listen<Pipe>(listenOptions);
    } catch (err) {
      this.internal.stop(true);
      throw err;
    }
  }

  get hostname(): string {
    return this.listener.hostname;
  }

  get port(): number {
    return this.listener.port;
  }

  /** Requests being answered now, HTTP/1.1 (Bun.serve's count) and HTTP/2. */
  get pendingRequests(): number {
    return this.internal.pendingRequests + (this.h2c?.pendingRequests ?? 0);
  }

  stop(now = false): Promise<void> {
    this.stopping = true;
    this.h2c?.close(now);
    if (now) {
      for (const p of [...this.pipes]) this.close(p);
      void this.internal.stop(true);
    }
    if (this.stopped === undefined) this.stopped = this.stopOnce(now);
    return this.stopped;
  }

  private async stopOnce(now: boolean): Promise<void> {
    this.listener.stop(false);
    // Not a request yet: closed, as a new connection would be refused.
    for (const p of [...this.pipes]) if (p.phase === "hello") this.close(p);
    const closed = new Promise<void>((resolve) => {
      this.allClosed = resolve;
    });
    this.checkClosed();
    await Promise.all([this.internal.stop(now), closed]);
  }

  private opened(client: Socket<Pipe>): void {
    const pipe: Pipe = {
      phase: "hello",
      peer: client.remoteAddress,
      hello: [],
      helloBytes: 0,
      client,
      toUpstream: [],
      toClient: [],
      endUpstream: false,
      endClient: false,
      lastActive: Date.now(),
      stats: this.stats,
    };
    client.data = pipe;
    this.pipes.add(pipe);
    client.timeout(this.options.state.settings.idleTimeoutSeconds);
  }

  /** A bug must cost this connection only, never the process or other clients. */
  private guard(pipe: Pipe, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      const listener = this.options.state.table.name;
      limitedLog("error", listener, "unexpected error on an h2c listener connection", {
        listener,
        error: String(err),
      });
      this.close(pipe);
    }
  }

  private fromClient(pipe: Pipe, chunk: Uint8Array): void {
    if (pipe.phase === "closed") return;
    if (pipe.phase === "handed") {
      pipe.client.timeout(this.options.state.settings.idleTimeoutSeconds);
      pipe.handed?.fromClient(chunk);
      return;
    }
    if (pipe.phase !== "hello") {
      relay(pipe, chunk, "upstream");
      return;
    }
    // Bun may reuse the read buffer for the next read: keep a copy.
    pipe.hello.push(chunk.slice());
    pipe.helloBytes += chunk.length;
    const bytes = concat(pipe.hello, pipe.helloBytes);
    pipe.hello = [bytes];
    const h2 = opensWithPreface(bytes);
    if (h2 === undefined) return;
    pipe.hello = [];
    if (h2) this.handOver(pipe, bytes);
    else this.pipeToServe(pipe, bytes);
  }

  /** An h2c connection: the session server gets the preface, then every client byte. */
  private handOver(pipe: Pipe, first: Uint8Array): void {
    // Stopping (the preface came late): no new session, as no new HTTP/1.1 request is taken.
    if (this.stopping) {
      this.close(pipe);
      return;
    }
    const client = pipe.client;
    const idle = this.options.state.settings.idleTimeoutSeconds;
    const stream = new HandedClient({
      write: (data) => {
        client.timeout(idle);
        return client.write(data);
      },
      end: () => client.end(),
      pause: () => client.pause(),
      resume: () => client.resume(),
      remoteAddress: pipe.peer,
      remotePort: client.remotePort,
    });
    pipe.phase = "handed";
    pipe.handed = stream;
    stream.on("error", () => {}); // the session reports and closes; the pipe closes with the socket
    stream.fromClient(first);
    if (this.h2c === undefined) this.h2c = new H2SessionServer(this.options.state, this.options.app, "http");
    this.h2c.accept(stream);
  }

  /** Anything else: bytes both ways between the client and the listener's Bun.serve. */
  private pipeToServe(pipe: Pipe, first: Uint8Array): void {
    pipe.phase = "connecting";
    pipe.toUpstream.push(first);
    pipe.client.timeout(0); // Bun.serve times the connection out from here
    let local = "";
    Bun.connect<Pipe>({
      hostname: "127.0.0.1",
      port: this.internal.port ?? 0,
      allowHalfOpen: true,
      data: pipe,
      socket: {
        open: (s) =>
          this.guard(pipe, () => {
            if (pipe.phase === "closed") {
              s.end();
              return;
            }
            local = `${s.localAddress}:${s.localPort}`;
            this.peers.set(local, pipe.peer);
            pipe.upstream = s;
            pipe.phase = "piping";
            flush(pipe, "upstream");
          }),
        data: (_s, chunk) => this.guard(pipe, () => relay(pipe, chunk, "client")),
        drain: () => this.guard(pipe, () => flush(pipe, "upstream")),
        end: () => this.guard(pipe, () => this.ended(pipe, "upstream")),
        close: () => {
          this.peers.delete(local);
          this.sideClosed(pipe, "upstream");
        },
        error: () => this.close(pipe),
        connectError: () => this.close(pipe),
      },
    }).catch(() => this.close(pipe));
  }

  /** One side sent FIN: end the other once what it still has to receive is written. */
  private ended(pipe: Pipe, side: "client" | "upstream"): void {
    if (pipe.phase === "handed") {
      pipe.handed?.push(null);
      return;
    }
    if (pipe.phase === "hello") {
      this.close(pipe);
      return;
    }
    if (side === "client") pipe.endUpstream = true;
    else pipe.endClient = true;
    flush(pipe, side === "client" ? "upstream" : "client");
  }

  /** One socket closed: the other still gets what is queued for it, then is ended (`flush`). */
  private sideClosed(pipe: Pipe | undefined, side: "client" | "upstream"): void {
    if (pipe === undefined) return;
    const pending = side === "client" ? pipe.toUpstream : pipe.toClient;
    if (pipe.phase !== "piping" || pending.length === 0) {
      this.close(pipe);
      return;
    }
    if (side === "client") pipe.endUpstream = true;
    else pipe.endClient = true;
  }

  private close(pipe: Pipe | undefined): void {
    if (pipe === undefined) return;
    if (pipe.phase !== "closed") {
      pipe.phase = "closed";
      pipe.hello = [];
      pipe.toClient = [];
      pipe.toUpstream = [];
      pipe.client.end();
      pipe.upstream?.end();
      pipe.handed?.destroy();
    }
    if (this.pipes.delete(pipe)) this.checkClosed();
  }

  private checkClosed(): void {
    if (this.stopping && this.pipes.size === 0) this.allClosed?.();
  }
}
