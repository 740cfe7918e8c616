/**
 * GatewayServer: the listeners of the current model, each a `Bun.serve` with a Hono app. `apply()`
 * compiles a model and swaps each listener's table with one assignment; listeners that appear are
 * opened, ones that disappear drain (in-flight requests finish). An HTTPS listener whose certificates
 * change is replaced by a second server on the same port (`reusePort`) before the old one drains,
 * since Bun's `server.reload()` keeps the old certificates.
 */
import type { Server, TLSOptions } from "bun";
import type { GatewayModel } from "../model/types.ts";
import { logger } from "../observability/logger.ts";
import { createListenerApp } from "./app.ts";
import { compile } from "./compile.ts";
import type { ListenerState, ProxySettings } from "./handler.ts";
import { errorResponse } from "./responses.ts";
import type { ListenerTable } from "./table.ts";

const log = logger.child({ component: "proxy" });

export interface GatewayServerOptions {
  /** Address for listeners whose model address is "" (default `0.0.0.0`). */
  bind?: string;
  /** Upstream time limit to response headers when a route sets none (default 60 000). */
  defaultUpstreamTimeoutMs?: number;
  /** `Server` header added to responses that lack one (default `gatehouse`). */
  serverHeader?: string;
}

interface LiveListener {
  readonly key: string;
  readonly server: Server<undefined>;
  readonly state: ListenerState;
  /** Protocol and certificates the server was started with; a change means a new server. */
  readonly identity: string;
}

export class GatewayServer {
  private readonly bind: string;
  private readonly settings: ProxySettings;
  private readonly live = new Map<string, LiveListener>();
  private readonly draining = new Set<Promise<void>>();

  constructor(options: GatewayServerOptions = {}) {
    this.bind = options.bind ?? "0.0.0.0";
    this.settings = {
      defaultUpstreamTimeoutMs: options.defaultUpstreamTimeoutMs ?? 60_000,
      serverHeader: options.serverHeader ?? "gatehouse",
    };
  }

  /** Compiles and serves `model`. Throws (changing nothing) when a new listener cannot bind. */
  async apply(model: GatewayModel): Promise<void> {
    const table = compile(model);
    for (const warning of table.warnings) log.warn("route table warning", { warning });
    const wanted = new Map<string, ListenerTable>();
    for (const lt of table.listeners) {
      const key = `${lt.address || this.bind}:${lt.port}`;
      if (wanted.has(key)) log.warn("two listeners on one address and port; the first is served", { key });
      else if (lt.protocol === "HTTPS" && (lt.tls?.certificates.length ?? 0) === 0)
        log.error("HTTPS listener without certificates is not opened", { listener: lt.name });
      else wanted.set(key, lt);
    }
    const opened: LiveListener[] = [];
    const replaced: LiveListener[] = [];
    try {
      for (const [key, lt] of wanted) {
        const cur = this.live.get(key);
        if (cur === undefined) opened.push(this.open(key, lt, lt.port));
        else if (cur.identity !== identityOf(lt)) {
          // Same socket options (TLS listeners all use reusePort) means the new one can bind beside it.
          if (!cur.identity.startsWith("HTTPS") || lt.protocol !== "HTTPS") await this.close(cur, true);
          replaced.push(this.open(key, lt, cur.state.boundPort));
        }
      }
    } catch (err) {
      for (const l of [...opened, ...replaced]) l.server.stop(true);
      throw err;
    }
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

  /** Bound sockets, for tests and logs (a model port of 0 shows the port actually bound). */
  ports(): { listener: string; address: string; port: number }[] {
    return [...this.live.values()].map((l) => ({
      listener: l.state.table.name,
      address: l.server.hostname ?? "",
      port: l.state.boundPort,
    }));
  }

  /** Stops accepting, lets in-flight requests finish, resolves when every listener is closed. */
  async stop(): Promise<void> {
    const all = [...this.live.values()];
    this.live.clear();
    await Promise.all(all.map((l) => this.close(l, false)));
    await Promise.all(this.draining);
  }

  private open(key: string, lt: ListenerTable, port: number): LiveListener {
    const state: ListenerState = { table: lt, boundPort: port, settings: this.settings };
    const app = createListenerApp(state);
    const tls = lt.protocol === "HTTPS" ? tlsOptions(lt) : undefined;
    const serverHeader = this.settings.serverHeader;
    const server = Bun.serve({
      hostname: lt.address || this.bind,
      port,
      reusePort: tls !== undefined,
      tls,
      // Bun counts a connection waiting for our upstream as idle: allow the upstream timeout and more.
      idleTimeout: Math.min(255, Math.max(75, Math.ceil(this.settings.defaultUpstreamTimeoutMs / 1000) + 5)),
      development: false,
      fetch: (req, srv) => app.fetch(req, srv),
      error: (err) => {
        log.error("unexpected error while serving a request", { listener: lt.name, error: err.message });
        return errorResponse(500, serverHeader);
      },
    });
    state.boundPort = server.port ?? port;
    log.info("listener open", { listener: lt.name, address: server.hostname, port: state.boundPort });
    return { key, server, state, identity: identityOf(lt) };
  }

  private close(l: LiveListener, now: boolean): Promise<void> {
    const done = l.server.stop(now).then(
      () => log.info("listener closed", { listener: l.state.table.name, port: l.state.boundPort }),
      (err: unknown) =>
        log.warn("listener close failed", { listener: l.state.table.name, error: String(err) }),
    );
    this.draining.add(done);
    void done.finally(() => this.draining.delete(done));
    return done;
  }
}

function identityOf(lt: ListenerTable): string {
  if (lt.protocol !== "HTTPS" || lt.tls === undefined) return lt.protocol;
  const certs = lt.tls.certificates.map((c) => `${c.hostnames.join(",")}\n${c.certPem}\n${c.keyPem}`);
  return `HTTPS\n${Bun.hash(certs.join("\n")).toString(16)}`;
}

/** The first certificate is the fallback (no server name); then one SNI entry per name. */
function tlsOptions(lt: ListenerTable): TLSOptions[] {
  const certs = lt.tls?.certificates ?? [];
  const first = certs[0];
  if (first === undefined) throw new Error(`listener ${lt.name}: HTTPS without certificates`);
  const entries: TLSOptions[] = [{ cert: first.certPem, key: first.keyPem }];
  for (const c of certs) {
    for (const name of c.hostnames) entries.push({ cert: c.certPem, key: c.keyPem, serverName: name });
  }
  return entries;
}
