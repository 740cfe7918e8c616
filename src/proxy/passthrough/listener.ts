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
 * the address a connection handed to the HTTPS listener sharing the port carries.
 */
import type { Socket, TCPSocketListener, TCPSocketListenOptions } from "bun";
import { limitedLog } from "../../observability/log-limit.ts";
import { logger } from "../../observability/logger.ts";
import { ProxyPreamble } from "../client/proxy-preamble.ts";
import { normalisePeer, type TrustedProxies } from "../client/trusted-proxies.ts";
import { maxClientHelloBytes, parseClientHello } from "./client-hello.ts";
import { HandedClient, type TerminationHandoff } from "./handoff.ts";
import { type PassthroughTable, routeFor } from "./table.ts";

const log = logger.child({ component: "passthrough" });

/** One client connection and, once routed, its upstream. */
interface Pipe {
  /** `handed`: given to the HTTPS listener sharing the port (`handed` is its stream). */
  phase: "hello" | "connecting" | "piping" | "handed" | "closed";
  /** `--proxy-protocol`: set until the connection's PROXY header is read. */
  preamble?: ProxyPreamble;
  /** The client: the socket's address, or the source its PROXY header named. */
  peer: string;
  handed?: HandedClient;
  hello: Uint8Array[];
  helloBytes: number;
  timer?: ReturnType<typeof setTimeout>;
  client: Socket<Pipe>;
  upstream?: Socket<Pipe>;
  /** Bytes read from one side that the other has not taken yet. */
  toUpstream: Uint8Array[];
  toClient: Uint8Array[];
  /** The side that ended first; the other is ended once its queue is written. */
  endUpstream: boolean;
  endClient: boolean;
}

export interface PassthroughOptions {
  /** A client that has not sent its whole ClientHello (and PROXY header) by then is closed (default 10 000). */
  helloTimeoutMs?: number;
  /**
   * `--proxy-protocol` names this listener: every connection starts with a PROXY header, which only these
   * trusted proxies may send (client/proxy-preamble.ts); any other connection is closed. Absent: none read.
   */
  proxyHeaderFrom?: TrustedProxies;
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

  constructor(table: PassthroughTable, port: number, options: PassthroughOptions = {}) {
    this.table = table;
    this.helloTimeoutMs = options.helloTimeoutMs ?? 10_000;
    this.proxyHeaderFrom = options.proxyHeaderFrom;
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
    };
    client.data = pipe;
    this.pipes.add(pipe);
    pipe.timer = setTimeout(() => this.close(pipe), this.helloTimeoutMs);
    const trusted = this.proxyHeaderFrom;
    if (trusted === undefined) return;
    if (trusted.trusts(normalisePeer(pipe.peer))) pipe.preamble = new ProxyPreamble();
    else this.refuse(pipe, "the peer may not send a PROXY header (--proxy-protocol-from)");
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
      if (rest === undefined || rest.length === 0) return;
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
    clearTimeout(pipe.timer);
    const route = routeFor(this.table, hello.serverName);
    if (route === undefined) {
      const handoff = this.terminate?.();
      if (handoff !== undefined) this.handOver(pipe, bytes, handoff);
      else this.refuse(pipe, `no route for SNI "${hello.serverName ?? ""}"`);
      return;
    }
    const dest = route.pick();
    if (dest.kind === "refused") {
      this.refuse(pipe, `${route.name}: ${dest.why}`);
      return;
    }
    pipe.phase = "connecting";
    pipe.toUpstream.push(bytes);
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

  /** The HTTPS listener terminates this connection: it gets the ClientHello, then every client byte. */
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

/** Write `chunk` to `to`, or queue it behind what is already waiting and pause the other side. */
function relay(pipe: Pipe, chunk: Uint8Array, to: "client" | "upstream"): void {
  const queue = to === "client" ? pipe.toClient : pipe.toUpstream;
  queue.push(chunk);
  flush(pipe, to);
  // Not everything written (or the upstream is still connecting): copy what stays, stop reading.
  if (queue.length > 0) {
    const last = queue.length - 1;
    queue[last] = (queue[last] as Uint8Array).slice();
    (to === "client" ? pipe.upstream : pipe.client)?.pause();
  }
}

/** Write what is queued for `to`; when all of it went, resume the other side (and end if asked). */
function flush(pipe: Pipe, to: "client" | "upstream"): void {
  const socket = to === "client" ? pipe.client : pipe.upstream;
  if (socket === undefined || pipe.phase === "closed") return;
  const queue = to === "client" ? pipe.toClient : pipe.toUpstream;
  while (queue.length > 0) {
    const head = queue[0] as Uint8Array;
    const n = socket.write(head);
    if (n < head.length) {
      queue[0] = head.subarray(Math.max(0, n));
      return;
    }
    queue.shift();
  }
  (to === "client" ? pipe.upstream : pipe.client)?.resume();
  if (to === "client" ? pipe.endClient : pipe.endUpstream) socket.end();
}

function concat(parts: readonly Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
