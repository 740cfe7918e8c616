/**
 * The passthrough half of GatewayServer's lifecycle: which PassthroughServers (TLS Passthrough, TCP) and
 * UdpRelays (UDP) are open, opening the new ones before an apply commits (so a port that cannot be bound
 * fails the apply and changes nothing), swapping tables of the ones that stay, and draining the ones that
 * go (connections in flight run to their end; `stop(true)` cuts them; UDP flows end at once).
 */
import type { GatewayModel } from "../../model/index.ts";
import { logger } from "../../observability/logger.ts";
import { readsProxyHeader } from "../client/proxy-preamble.ts";
import { type ProxySettings, proxyHeaderSenders } from "../settings.ts";
import type { TerminationHandoff } from "./handoff.ts";
import { PassthroughServer } from "./listener.ts";
import { newStreamStats, type StreamStats } from "./pipe.ts";
import { compilePassthrough, type PassthroughTable } from "./table.ts";
import { UdpRelay } from "./udp-relay.ts";

/** What serves one socket of the passthrough listeners. */
type StreamServer = PassthroughServer | UdpRelay;

/** The timeouts of `--stream-idle-timeout-ms` and `--udp-idle-timeout-ms` (GatewayServerOptions). */
export interface StreamTimeouts {
  readonly streamIdleTimeoutMs?: number;
  readonly udpIdleTimeoutMs?: number;
}

const log = logger.child({ component: "proxy" });

/** An apply in the making: `commit` makes it current, `abort` closes what it opened. */
export interface PassthroughApply {
  /** Keys of the sockets shared with an HTTPS listener (which must not bind them itself). */
  readonly shared: ReadonlySet<string>;
  /** The port bound for `key` (a model port of 0 binds a free one). */
  portOf(key: string): number | undefined;
  commit(): void;
  abort(): void;
}

/** Where a shared socket hands what it does not pass through (undefined: that key is not shared). */
export type ShareWith = (key: string) => (() => TerminationHandoff | undefined) | undefined;

export class PassthroughListeners {
  private readonly live = new Map<string, StreamServer>();
  /** Counters by listener name, kept across applies and restarts of a socket (Prometheus counters). */
  private readonly counters = new Map<string, StreamStats>();

  constructor(private readonly options: StreamTimeouts = {}) {}

  /** Each listener's counters (gatehouse_stream_* metrics). */
  stats(): ReadonlyMap<string, StreamStats> {
    return this.counters;
  }
  /** Listeners closing (removed by an apply or by stop()), until their connections have closed. */
  private readonly draining = new Map<StreamServer, Promise<void>>();

  /**
   * Open the sockets `model` adds. `taken` holds the `address:port` keys of HTTP listeners: a
   * passthrough listener there is not opened (both would accept on one port), and says so, unless
   * `share` names the HTTPS listener it hands every other ClientHello to (`--enable-ssl-passthrough`).
   */
  async prepare(
    model: GatewayModel,
    bind: string,
    taken: ReadonlySet<string>,
    share?: ShareWith,
    /** `--proxy-protocol`, and who may send the header: which new sockets read a PROXY header first. */
    client?: Pick<ProxySettings, "proxyProtocol" | "proxyProtocolFrom" | "trustedProxies">,
  ): Promise<PassthroughApply> {
    const wanted = compilePassthrough(model, bind);
    const terminations = new Map<string, () => TerminationHandoff | undefined>();
    for (const [key, table] of wanted) {
      if (!taken.has(key)) continue;
      const terminate = share?.(key);
      if (terminate !== undefined) {
        terminations.set(key, terminate);
        continue;
      }
      log.error("passthrough listener shares its address and port with an HTTP listener; not served", {
        listener: table.name,
        socket: key,
        hint: "an HTTPS listener can share it with --enable-ssl-passthrough",
      });
      wanted.delete(key);
    }
    const opened = new Map<string, StreamServer>();
    try {
      for (const [key, table] of wanted) {
        if (this.live.has(key)) continue;
        const server = await this.open(table, client);
        if (server instanceof PassthroughServer) server.terminate = terminations.get(key);
        opened.set(key, server);
        log.info("listener open", { listener: table.name, address: server.hostname, port: server.port });
      }
    } catch (err) {
      for (const s of opened.values()) void s.stop(true);
      throw err;
    }
    return {
      shared: new Set(terminations.keys()),
      portOf: (key) => (opened.get(key) ?? this.live.get(key))?.port,
      abort: () => {
        for (const s of opened.values()) void s.stop(true);
      },
      commit: () => {
        for (const [key, table] of wanted) {
          const cur = this.live.get(key);
          if (cur === undefined) continue;
          cur.table = table;
          if (cur instanceof PassthroughServer) cur.terminate = terminations.get(key);
        }
        for (const [key, server] of opened) this.live.set(key, server);
        for (const [key, server] of this.live) {
          if (wanted.has(key)) continue;
          this.live.delete(key);
          this.drain(server, false);
        }
      },
    };
  }

  /** Bound sockets, as GatewayServer.ports() reports them. */
  ports(): { listener: string; address: string; port: number }[] {
    return [...this.live.values()].map((s) => ({
      listener: s.table.name,
      address: s.hostname,
      port: s.port,
    }));
  }

  /** TCP connections of TLS Passthrough and TCP listeners (UDP flows are not connections). */
  openConnections(): number {
    let n = 0;
    for (const s of this.live.values()) if (s instanceof PassthroughServer) n += s.openConnections;
    return n;
  }

  /** A server for `table`, its counters kept by listener name. */
  private async open(
    table: PassthroughTable,
    client: Pick<ProxySettings, "proxyProtocol" | "proxyProtocolFrom" | "trustedProxies"> | undefined,
  ): Promise<StreamServer> {
    const stats = this.counters.get(table.name) ?? newStreamStats();
    this.counters.set(table.name, stats);
    const { streamIdleTimeoutMs, udpIdleTimeoutMs } = this.options;
    if (table.protocol === "UDP")
      return UdpRelay.open(table, table.port, {
        stats,
        ...(udpIdleTimeoutMs !== undefined ? { idleTimeoutMs: udpIdleTimeoutMs } : {}),
      });
    const trusted = client === undefined ? undefined : proxyHeaderSenders(client);
    const proxied = trusted !== undefined && readsProxyHeader(client?.proxyProtocol, table.port);
    return new PassthroughServer(table, table.port, {
      stats,
      ...(streamIdleTimeoutMs !== undefined ? { idleTimeoutMs: streamIdleTimeoutMs } : {}),
      ...(proxied ? { proxyHeaderFrom: trusted } : {}),
    });
  }

  /** Stop every listener; resolves when their connections have closed (`force`: closes them now). */
  async stop(force: boolean): Promise<void> {
    const all = [...this.live.values()];
    this.live.clear();
    if (force) for (const s of this.draining.keys()) void s.stop(true);
    for (const s of all) this.drain(s, force);
    await Promise.all(this.draining.values());
  }

  private drain(server: StreamServer, now: boolean): void {
    const done = server
      .stop(now)
      .then(() => log.info("listener closed", { listener: server.table.name, port: server.port }));
    this.draining.set(server, done);
    void done.finally(() => this.draining.delete(server));
  }
}
