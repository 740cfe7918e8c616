/**
 * PassthroughServer: one `Bun.listen` socket for the TLS Passthrough listeners sharing an address and
 * port. A connection's first bytes are buffered until they hold the whole ClientHello (at most
 * `maxClientHelloBytes`, within `helloTimeoutMs`); its SNI picks a route (table.ts), the route a
 * backend by weight and an endpoint round-robin; `Bun.connect` opens the upstream, the buffered hello
 * is written first, then bytes are piped both ways. TLS is never terminated here: the client and the
 * backend handshake with each other, so the client sees the backend's certificate.
 *
 * Backpressure: when one side's write is short, the rest is queued and the other side is paused until
 * `drain`, so a slow reader holds at most one read's worth of bytes here. A malformed hello, an SNI no
 * route takes, an invalid backendRef picked by weight or a backend without endpoints: the connection
 * is closed. `table` is swapped by `apply`; connections keep the route they started with. With
 * `--proxy-protocol` a PROXY header from a trusted proxy comes first (`proxyHeaderFrom`); its client is
 * the address a connection handed to the HTTPS listener sharing the port carries. A TCP listener's table
 * (`protocol: TCP`, TCPRoutes) reads no ClientHello: a connection is routed as soon as it opens (after its
 * PROXY header, when one is read), the client's bytes queued until the upstream is connected.
 */
import type { Socket, TCPSocketListener, TCPSocketListenOptions } from "bun";
import { limitedLog } from "../../observability/log-limit.ts";
import { logger } from "../../observability/logger.ts";
import { ProxyPreamble } from "../client/proxy-preamble.ts";
import { normalisePeer, type TrustedProxies } from "../client/trusted-proxies.ts";
import { maxClientHelloBytes, parseClientHello } from "./client-hello.ts";
import { HandedClient, type TerminationHandoff } from "./handoff.ts";
import { concat, flush, newStreamStats, type Pipe, relay, type StreamStats } from "./pipe.ts";
import { type PassthroughTable, routeFor } from "./table.ts";
import { terminatingHandoff } from "./terminate.ts";

const log = logger.child({ component: "passthrough" });

export interface PassthroughOptions {
  /** A client that has not sent its whole ClientHello (and PROXY header) by then is closed (default 10 000). */
  helloTimeoutMs?: number;
  /**
   * `--proxy-protocol` names this listener: every connection starts with a PROXY header, which only these
   * trusted proxies may send (client/proxy-preamble.ts); any other connection is closed. Absent: none read.
   */
  proxyHeaderFrom?: TrustedProxies;
  /**
   * A routed connection with no byte either way for this long is closed (0: never); default one hour,
   * Envoy's TCP proxy default. Checked by a sweep every quarter of it (at most 30 s), not per byte.
   */
  idleTimeoutMs?: number;
  /** Counters to add to (kept by the owner across applies); default: this server's own. */
  stats?: StreamStats;
}

export class PassthroughServer {
  table: PassthroughTable;
  private readonly listener: TCPSocketListener<Pipe>;
  private readonly pipes = new Set<Pipe>();
  private readonly helloTimeoutMs: number;
  private readonly proxyHeaderFrom: TrustedProxies | undefined;
  /**
   * The HTTPS listener sharing this port (`--enable-ssl-passthrough`): a ClientHello whose SNI no route
   * takes is handed to it, looked up per connection so a replaced listener is followed. Absent: closed.
   */
  terminate: (() => TerminationHandoff | undefined) | undefined;
  private stopped: Promise<void> | undefined;
  private allClosed: (() => void) | undefined;
  readonly stats: StreamStats;
  private readonly idleTimeoutMs: number;
  private readonly sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(table: PassthroughTable, port: number, options: PassthroughOptions = {}) {
    this.table = table;
    this.helloTimeoutMs = options.helloTimeoutMs ?? 10_000;
    this.proxyHeaderFrom = options.proxyHeaderFrom;
    this.stats = options.stats ?? newStreamStats();
    this.idleTimeoutMs = options.idleTimeoutMs ?? 3_600_000;
    if (this.idleTimeoutMs > 0) {
      this.sweeper = setInterval(() => this.closeIdle(), Math.min(30_000, Math.ceil(this.idleTimeoutMs / 4)));
      this.sweeper.unref();
    }
    // Bun.listen honours reusePort (raw-front/front.ts measured it) though its types omit it.
    const listenOptions: TCPSocketListenOptions<Pipe> & { reusePort: boolean } = {
      hostname: table.address,
      port,
      // Worker processes (`--workers`) share the traffic ports.
      reusePort: true,
      // A FIN from the client is passed on once its bytes are (`ended`), not turned into a close.
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
      },
    };
    this.listener = Bun.listen<Pipe>(listenOptions);
  }

  get hostname(): string {
    return this.listener.hostname;
  }

  get port(): number {
    return this.listener.port;
  }

  /** Client connections open now. */
  get openConnections(): number {
    return this.pipes.size;
  }

  /** Stops accepting; resolves when every connection has closed (`now`: closes them at once). */
  stop(now = false): Promise<void> {
    if (this.stopped === undefined) {
      clearInterval(this.sweeper);
      this.listener.stop(false);
      this.stopped = new Promise<void>((resolve) => {
        this.allClosed = resolve;
      });
      this.checkClosed();
    }
    if (now) for (const p of [...this.pipes]) this.close(p);
    return this.stopped;
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
    pipe.timer = setTimeout(() => this.close(pipe), this.helloTimeoutMs);
    const trusted = this.proxyHeaderFrom;
    if (trusted !== undefined) {
      if (trusted.trusts(normalisePeer(pipe.peer))) pipe.preamble = new ProxyPreamble();
      else this.refuse(pipe, "the peer may not send a PROXY header (--proxy-protocol-from)");
      return;
    }
    if (this.table.protocol === "TCP") this.route(pipe, undefined, undefined);
  }

  /** The bytes after the PROXY header once it is whole; undefined while waiting, or refused. */
  private afterProxyHeader(pipe: Pipe, chunk: Uint8Array): Uint8Array | undefined {
    const step = (pipe.preamble as ProxyPreamble).feed(chunk);
    if (step.kind === "wait") return undefined;
    if (step.kind === "refused") {
      this.refuse(pipe, `PROXY protocol: ${step.reason}`);
      return undefined;
    }
    pipe.preamble = undefined;
    if (step.source !== undefined) pipe.peer = step.source;
    return step.rest;
  }

  /** Close the routed connections idle for longer than the idle timeout (the hello has its own). */
  private closeIdle(): void {
    const before = Date.now() - this.idleTimeoutMs;
    for (const pipe of this.pipes) {
      if ((pipe.phase !== "piping" && pipe.phase !== "connecting") || pipe.lastActive > before) continue;
      this.stats.idleClosed++;
      this.refuse(pipe, "idle timeout");
    }
  }

  /** A bug must cost this connection only, never the process or other clients. */
  private guard(pipe: Pipe, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      limitedLog("error", this.table.name, "unexpected error on a passthrough connection", {
        listener: this.table.name,
        error: String(err),
      });
      this.close(pipe);
    }
  }

  private fromClient(pipe: Pipe, chunk: Uint8Array): void {
    if (pipe.phase === "closed") return;
    if (pipe.phase === "handed") {
      pipe.handed?.fromClient(chunk);
      return;
    }
    if (pipe.phase !== "hello") {
      relay(pipe, chunk, "upstream");
      return;
    }
    if (pipe.preamble !== undefined) {
      const rest = this.afterProxyHeader(pipe, chunk);
      if (rest === undefined) return;
      if (this.table.protocol === "TCP") {
        this.route(pipe, undefined, rest.length > 0 ? rest.slice() : undefined);
        return;
      }
      if (rest.length === 0) return;
      chunk = rest;
    }
    // Bun may reuse the read buffer for the next read: keep a copy.
    pipe.hello.push(chunk.slice());
    pipe.helloBytes += chunk.length;
    if (pipe.helloBytes > maxClientHelloBytes) {
      this.refuse(pipe, "ClientHello larger than 16 KB");
      return;
    }
    const bytes = concat(pipe.hello, pipe.helloBytes);
    pipe.hello = [bytes];
    const hello = parseClientHello(bytes);
    if (hello.kind === "incomplete") return;
    if (hello.kind === "invalid") {
      this.refuse(pipe, `malformed ClientHello: ${hello.reason}`);
      return;
    }
    this.route(pipe, hello.serverName, bytes);
  }

  /** Pick the route for `sni` and its destination, and connect; `first`: bytes the upstream gets first. */
  private route(pipe: Pipe, sni: string | undefined, first: Uint8Array | undefined): void {
    clearTimeout(pipe.timer);
    const route = routeFor(this.table, sni);
    if (route === undefined) {
      const handoff = first !== undefined ? this.terminate?.() : undefined;
      if (handoff !== undefined && first !== undefined) this.handOver(pipe, first, handoff);
      else
        this.refuse(pipe, this.table.protocol === "TCP" ? "no TCPRoute" : `no route for SNI "${sni ?? ""}"`);
      return;
    }
    const dest = route.pick();
    if (dest.kind === "refused") {
      this.refuse(pipe, `${route.name}: ${dest.why}`);
      return;
    }
    this.stats.routed++;
    if (route.terminate !== undefined && first !== undefined) {
      const target = { listener: this.table.name, route: route.name, address: dest.address, port: dest.port };
      this.handOver(pipe, first, terminatingHandoff(route.terminate, target, this.stats, this.idleTimeoutMs));
      return;
    }
    pipe.phase = "connecting";
    if (first !== undefined) pipe.toUpstream.push(first);
    pipe.hello = [];
    this.connect(pipe, dest.address, dest.port, route.name);
  }

  private connect(pipe: Pipe, address: string, port: number, route: string): void {
    Bun.connect<Pipe>({
      hostname: address,
      port,
      allowHalfOpen: true,
      data: pipe,
      socket: {
        open: (s) =>
          this.guard(pipe, () => {
            if (pipe.phase === "closed") {
              s.end();
              return;
            }
            pipe.upstream = s;
            pipe.phase = "piping";
            flush(pipe, "upstream");
          }),
        data: (_s, chunk) => this.guard(pipe, () => relay(pipe, chunk, "client")),
        drain: () => this.guard(pipe, () => flush(pipe, "upstream")),
        end: () => this.guard(pipe, () => this.ended(pipe, "upstream")),
        close: () => this.sideClosed(pipe, "upstream"),
        error: () => this.close(pipe),
        connectError: (_s, err) => {
          this.stats.upstreamFailed++;
          limitedLog("warn", this.table.name, "passthrough backend unreachable", {
            listener: this.table.name,
            route,
            endpoint: `${address}:${port}`,
            error: err.message,
          });
          this.close(pipe);
        },
      },
    }).catch(() => this.close(pipe));
  }

  /**
   * A TLS server terminates this connection (the HTTPS listener sharing the port, or a TLS listener in
   * mode Terminate): it gets the ClientHello, then every client byte.
   */
  private handOver(pipe: Pipe, hello: Uint8Array, handoff: TerminationHandoff): void {
    const client = pipe.client;
    const stream = new HandedClient({
      write: (data) => client.write(data),
      end: () => client.end(),
      pause: () => client.pause(),
      resume: () => client.resume(),
      remoteAddress: pipe.peer,
      remotePort: client.remotePort,
    });
    pipe.phase = "handed";
    pipe.handed = stream;
    pipe.hello = [];
    stream.on("error", () => {}); // the TLS server reports and closes; the pipe closes with the socket
    stream.fromClient(hello);
    handoff(stream);
  }

  /** One side sent FIN: end the other once what it still has to receive is written. */
  private ended(pipe: Pipe, side: "client" | "upstream"): void {
    if (pipe.phase === "handed") {
      pipe.handed?.push(null);
      return;
    }
    if (side === "client") pipe.endUpstream = true;
    else pipe.endClient = true;
    if (pipe.phase === "hello") {
      this.close(pipe);
      return;
    }
    flush(pipe, side === "client" ? "upstream" : "client");
  }

  /** One socket closed: the other still gets what is queued for it, then is ended (`flush`). */
  private sideClosed(pipe: Pipe | undefined, side: "client" | "upstream"): void {
    if (pipe === undefined) return;
    if (pipe.phase === "handed") {
      pipe.handed?.destroy();
      this.close(pipe);
      return;
    }
    const pending = side === "client" ? pipe.toUpstream : pipe.toClient;
    if (pipe.phase !== "piping" || pending.length === 0) {
      this.close(pipe);
      return;
    }
    if (side === "client") pipe.endUpstream = true;
    else pipe.endClient = true;
  }

  private refuse(pipe: Pipe, why: string): void {
    if (pipe.phase === "hello") this.stats.refused++;
    log.debug("passthrough connection closed", { listener: this.table.name, reason: why });
    this.close(pipe);
  }

  private close(pipe: Pipe | undefined): void {
    if (pipe === undefined) return;
    if (pipe.phase !== "closed") {
      pipe.phase = "closed";
      clearTimeout(pipe.timer);
      pipe.toClient = [];
      pipe.toUpstream = [];
      pipe.client.end();
      pipe.upstream?.end();
      pipe.handed?.destroy();
    }
    if (this.pipes.delete(pipe)) this.checkClosed();
  }

  private checkClosed(): void {
    if (this.stopped !== undefined && this.pipes.size === 0) this.allClosed?.();
  }
}
