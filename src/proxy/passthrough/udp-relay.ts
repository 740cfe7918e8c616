/**
 * UdpRelay: one UDP socket for a UDP listener (UDPRoutes). Datagrams are grouped into flows by their
 * source address and port; a flow's first datagram picks the route (the oldest: a datagram carries
 * nothing to choose by), a backend by weight and an endpoint round-robin, and opens a connected socket to
 * it, so the backend's answers come back on that socket and go out to that client. A flow ends after
 * `idleTimeoutMs` without a datagram either way (default one minute, Envoy's UDP proxy default), when
 * its backend refuses (an ICMP port unreachable on the connected socket: the next datagram picks again),
 * or, at `maxFlows`, to make room for a new one (oldest first, counted). Datagrams of a flow whose socket
 * is still connecting wait, at most 64 of them; more are dropped, as UDP may. Nothing is ever parsed.
 *
 * node:dgram, not Bun.udpSocket: only it binds with SO_REUSEPORT (measured: Bun.udpSocket's second bind
 * of a port fails with EADDRINUSE), which `--workers` processes need to share the port; the kernel then
 * keeps each client's datagrams on one process, so its flow stays whole.
 */
import dgram from "node:dgram";
import { isIPv6 } from "node:net";
import { limitedLog } from "../../observability/log-limit.ts";
import { newStreamStats, type StreamStats } from "./pipe.ts";
import { type PassthroughTable, routeFor } from "./table.ts";

/** Datagrams a flow holds while its upstream socket connects. */
const maxPending = 64;

interface Flow {
  readonly clientAddress: string;
  readonly clientPort: number;
  readonly upstream: dgram.Socket;
  /** Datagrams waiting for the upstream socket to connect; undefined once connected. */
  pending: Buffer[] | undefined;
  lastActive: number;
}

export interface UdpRelayOptions {
  /** A flow with no datagram either way for this long is closed (0: never); default 60 000. */
  readonly idleTimeoutMs?: number;
  /** Flows kept at most; the oldest is closed for a new one. Default 16 384. */
  readonly maxFlows?: number;
  /** Counters to add to (kept by the owner across applies). */
  readonly stats?: StreamStats;
}

export class UdpRelay {
  table: PassthroughTable;
  readonly stats: StreamStats;
  private readonly flows = new Map<string, Flow>();
  private readonly idleTimeoutMs: number;
  private readonly maxFlows: number;
  private readonly sweeper: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  /** Where the socket is bound, kept: a closed dgram socket no longer says. */
  readonly hostname: string;
  readonly port: number;

  private constructor(
    table: PassthroughTable,
    private readonly socket: dgram.Socket,
    options: UdpRelayOptions,
  ) {
    this.table = table;
    const bound = socket.address();
    this.hostname = bound.address;
    this.port = bound.port;
    this.stats = options.stats ?? newStreamStats();
    this.idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
    this.maxFlows = Math.max(1, options.maxFlows ?? 16_384);
    socket.on("message", (msg, from) => this.fromClient(msg, from.address, from.port));
    socket.on("error", (err) =>
      limitedLog("warn", table.name, "UDP listener error", { listener: table.name, error: err.message }),
    );
    if (this.idleTimeoutMs > 0) {
      this.sweeper = setInterval(() => this.closeIdle(), Math.min(5_000, Math.ceil(this.idleTimeoutMs / 4)));
      this.sweeper.unref();
    }
  }

  /** Bind `table`'s address and `port` (0: a free one); rejects when the port cannot be bound. */
  static async open(table: PassthroughTable, port: number, options: UdpRelayOptions = {}): Promise<UdpRelay> {
    const socket = dgram.createSocket({
      type: isIPv6(table.address) ? "udp6" : "udp4",
      reuseAddr: true,
      reusePort: true,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(port, table.address, () => {
        socket.off("error", reject);
        resolve();
      });
    });
    return new UdpRelay(table, socket, options);
  }

  /** Flows open now (UDP has no connections: not counted as client connections). */
  get openFlows(): number {
    return this.flows.size;
  }

  /** UDP has nothing to drain: every flow is closed at once. */
  stop(_now = false): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      clearInterval(this.sweeper);
      for (const key of [...this.flows.keys()]) this.closeFlow(key);
      this.socket.close();
    }
    return Promise.resolve();
  }

  private fromClient(msg: Buffer, address: string, port: number): void {
    const key = `${address}|${port}`;
    const flow = this.flows.get(key) ?? this.openFlow(key, address, port);
    if (flow === undefined) return;
    flow.lastActive = Date.now();
    this.stats.bytesToUpstream += msg.length;
    if (flow.pending === undefined) flow.upstream.send(msg);
    else if (flow.pending.length < maxPending) flow.pending.push(Buffer.from(msg));
  }

  private openFlow(key: string, clientAddress: string, clientPort: number): Flow | undefined {
    const route = routeFor(this.table, undefined);
    const dest = route?.pick();
    if (route === undefined || dest === undefined || dest.kind === "refused") {
      this.stats.refused++;
      return undefined;
    }
    if (this.flows.size >= this.maxFlows) {
      const oldest = this.flows.keys().next().value as string;
      this.closeFlow(oldest);
      this.stats.evicted++;
    }
    const upstream = dgram.createSocket(isIPv6(dest.address) ? "udp6" : "udp4");
    const flow: Flow = { clientAddress, clientPort, upstream, pending: [], lastActive: Date.now() };
    upstream.on("message", (msg) => {
      flow.lastActive = Date.now();
      this.stats.bytesToClient += msg.length;
      if (!this.closed) this.socket.send(msg, flow.clientPort, flow.clientAddress);
    });
    upstream.on("error", (err) => {
      this.stats.upstreamFailed++;
      limitedLog("warn", this.table.name, "UDP backend unreachable", {
        listener: this.table.name,
        route: route.name,
        endpoint: `${dest.address}:${dest.port}`,
        error: err.message,
      });
      if (this.flows.get(key) === flow) this.closeFlow(key);
    });
    upstream.connect(dest.port, dest.address, () => {
      const waiting = flow.pending ?? [];
      flow.pending = undefined;
      for (const m of waiting) upstream.send(m);
    });
    this.flows.set(key, flow);
    this.stats.routed++;
    return flow;
  }

  private closeFlow(key: string): void {
    const flow = this.flows.get(key);
    if (flow === undefined) return;
    this.flows.delete(key);
    try {
      flow.upstream.close();
    } catch {
      // closed already (an error closes it)
    }
  }

  private closeIdle(): void {
    const before = Date.now() - this.idleTimeoutMs;
    for (const [key, flow] of this.flows) {
      if (flow.lastActive > before) continue;
      this.closeFlow(key);
      this.stats.idleClosed++;
    }
  }
}
