/**
 * Keep-alive connections to upstream endpoints over `Bun.connect`, shared by every fast listener of the
 * process. An idle connection is taken LIFO (the warmest); at most MAX_IDLE per endpoint are kept, the
 * rest are closed. An idle connection the upstream closes leaves the pool at once (its `close` event);
 * one that closes while we are already reusing it is the caller's retry case (`reused`).
 * `Bun.connect` has no time limit of its own: a new connection asked for with one is on a deadline list
 * until it opens; past it the handler hears `onClose` with a ConnectTimeout (nginx `proxy_connect_timeout`),
 * and a socket that opens later is closed at once.
 *
 * A TLS backend's connections (backend-tls/options.ts) are pooled apart, keyed by its settings and the
 * endpoint. Such a connection is handed to its exchange only once the handshake has verified the
 * certificate (Bun calls `open` before the handshake, and bytes written then are lost: measured); a
 * refused certificate closes it with a BackendTLSError before any request byte leaves.
 *
 * A backend whose circuit breaker caps connections (circuit-breaker/breaker.ts) has its connections
 * pooled apart and counted from connect to close, idle ones included. A new one over a cap first closes
 * an idle one that is in the way (the backend's, or the endpoint's for its own cap); if none is, acquire
 * refuses (the exchange answers 503 at once: no request waits for a connection). One that has carried
 * `maxRequestsPerConnection` requests is closed instead of pooled.
 */
import type { Socket } from "bun";
import type { CompiledBackendTLS } from "../../backend-tls/options.ts";
import type { CircuitBreaker } from "../../circuit-breaker/breaker.ts";
import { type DeadlineList, deadlineList, type Expiring } from "../deadlines.ts";
import { Outbox } from "../outbox.ts";

/** What an exchange hears from the upstream connection it holds. */
export interface UpstreamHandler {
  onOpen(conn: UpstreamConn): void;
  onData(conn: UpstreamConn, chunk: Buffer): void;
  onDrain(conn: UpstreamConn): void;
  /** Closed, reset or could not connect; called once. */
  onClose(conn: UpstreamConn, error: Error | undefined): void;
}

/** How a TLS backend's failed handshake or refused certificate starts, as an attempt's error text. */
export const TLS_FAILED = "BackendTLSError: the TLS handshake with the backend failed";

/** A TLS backend's handshake failed or its certificate was refused. */
export class BackendTLSError extends Error {
  override readonly name = "BackendTLSError";
  constructor(readonly code: string) {
    super(`the TLS handshake with the backend failed: ${code}`);
  }
}

/** A new connection did not open within its limit. */
export class ConnectTimeout extends Error {
  constructor(readonly ms: number) {
    super(`could not connect within ${ms} ms`);
  }
}

const MAX_IDLE = 128;
/** Seconds an idle pooled connection is kept before we close it. */
const IDLE_SECONDS = 60;

export class UpstreamConn implements Expiring {
  socket: Socket<UpstreamConn> | undefined;
  handler: UpstreamHandler | undefined;
  readonly out = new Outbox();
  /** Served a request before: a close before any response byte may be a stale keep-alive. */
  reused = false;
  closed = false;
  /** `performance.now()` when it last went back to the pool. */
  idleSince = 0;
  /** The connect limit (ms), on a deadline list while connecting (Expiring). */
  connectMs = 0;
  dlList: DeadlineList | undefined;
  dlPrev: Expiring | undefined;
  dlNext: Expiring | undefined;
  dlDue = 0;
  /** Requests it was handed for (maxRequestsPerConnection). */
  requests = 1;
  /** The breaker that counts it until it closes (connection caps only); undefined once uncounted. */
  breaker: CircuitBreaker | undefined;

  /**
   * `key`: where the pool keeps it idle (the endpoint, prefixed by the TLS settings' key for TLS and by
   * the backend for one whose connections are counted).
   */
  constructor(
    readonly key: string,
    readonly endpoint = "",
  ) {}

  /** Gives its place under the connection caps back, once. */
  uncount(): void {
    this.breaker?.endConnection(this.endpoint);
    this.breaker = undefined;
  }

  /** Still not open when its connect limit passed. */
  expired(): void {
    if (this.closed || this.socket !== undefined) return;
    const h = this.handler;
    this.destroy();
    h?.onClose(this, new ConnectTimeout(this.connectMs));
  }

  /** Closes now; nothing more is heard from it. */
  destroy(): void {
    this.uncount();
    this.dlList?.disarm(this);
    this.handler = undefined;
    this.out.discard();
    if (!this.closed) {
      this.closed = true;
      this.socket?.terminate();
    }
  }
}

export class UpstreamPool {
  private readonly idle = new Map<string, UpstreamConn[]>();
  private readonly addresses = new Map<string, Address>();

  /**
   * A connection to `endpoint` (`http://ip:port`) now owned by `handler`; it may still be connecting.
   * `maxIdleMs`: a request that cannot be retried should not meet an upstream's keep-alive timeout, so
   * it takes a pooled connection only when that has been idle for less than this. `connectMs`: how long a
   * new connection may take to open (whole ms; Infinity: no limit of its own). `caps`: the backend's
   * breaker when it counts connections; undefined back when a cap refused one (nothing was called).
   */
  acquire(
    endpoint: string,
    handler: UpstreamHandler,
    fresh = false,
    maxIdleMs = Number.POSITIVE_INFINITY,
    connectMs = Number.POSITIVE_INFINITY,
    tls?: CompiledBackendTLS,
    caps?: CircuitBreaker,
  ): UpstreamConn | undefined {
    const own = tls === undefined ? endpoint : `${tls.key} ${endpoint}`;
    const key = caps === undefined ? own : `${caps.backendId}\u0000${own}`;
    const list = fresh ? undefined : this.idle.get(key);
    const warmest = list?.[list.length - 1];
    const usable =
      warmest !== undefined &&
      (maxIdleMs === Number.POSITIVE_INFINITY || performance.now() - warmest.idleSince < maxIdleMs);
    const pooled = usable ? list?.pop() : undefined;
    if (pooled !== undefined) {
      pooled.handler = handler;
      pooled.reused = true;
      pooled.requests++;
      pooled.socket?.timeout(0);
      handler.onOpen(pooled);
      return pooled;
    }
    if (caps !== undefined && !this.room(caps, endpoint, key)) return undefined;
    const conn = new UpstreamConn(key, endpoint);
    conn.breaker = caps;
    conn.handler = handler;
    if (connectMs !== Number.POSITIVE_INFINITY) {
      conn.connectMs = connectMs;
      deadlineList(connectMs).arm(conn, performance.now());
    }
    const a = this.address(endpoint);
    const opened =
      a.unix !== undefined
        ? Bun.connect<UpstreamConn>({ unix: a.unix, data: conn, socket: HANDLERS })
        : tls === undefined
          ? Bun.connect<UpstreamConn>({ hostname: a.hostname, port: a.port, data: conn, socket: HANDLERS })
          : Bun.connect<UpstreamConn>({
              hostname: a.hostname,
              port: a.port,
              data: conn,
              socket: TLS_HANDLERS,
              tls: tls.fetch,
            });
    opened.catch((err: unknown) => closed(conn, err instanceof Error ? err : new Error(String(err))));
    return conn;
  }

  /** Counts a new connection under `caps`, closing an idle one in the way if it must; false: refused. */
  private room(caps: CircuitBreaker, endpoint: string, key: string): boolean {
    const full = caps.roomFor(endpoint);
    if (full !== undefined) this.coldest(caps, full === "endpoint_connections" ? key : undefined)?.destroy();
    return caps.tryConnect(endpoint);
  }

  /** The coldest idle connection kept under `key`, or (none given) under any of the backend's, taken out. */
  private coldest(caps: CircuitBreaker, key: string | undefined): UpstreamConn | undefined {
    if (key !== undefined) return this.idle.get(key)?.shift();
    const prefix = `${caps.backendId}\u0000`;
    for (const [k, list] of this.idle) if (k.startsWith(prefix) && list.length > 0) return list.shift();
    return undefined;
  }

  /** Returns a connection whose last response ended cleanly. */
  release(conn: UpstreamConn): void {
    conn.handler = undefined;
    const spent = conn.breaker !== undefined && conn.requests >= conn.breaker.caps.maxRequestsPerConnection;
    if (conn.closed || conn.out.backlogged || spent) {
      conn.destroy();
      return;
    }
    let list = this.idle.get(conn.key);
    if (list === undefined) {
      list = [];
      this.idle.set(conn.key, list);
    }
    if (list.length >= MAX_IDLE) {
      conn.destroy();
      return;
    }
    conn.socket?.timeout(IDLE_SECONDS);
    conn.idleSince = performance.now();
    // It may have been paused for a slow client; an idle connection must notice the upstream closing.
    conn.socket?.resume();
    list.push(conn);
  }

  /** Idle connections per endpoint (tests). */
  idleCount(endpoint: string): number {
    return this.idle.get(endpoint)?.length ?? 0;
  }

  /** Closes the idle connections to `endpoint` (every endpoint when absent). */
  closeIdle(endpoint?: string): void {
    if (endpoint !== undefined) {
      for (const c of this.idle.get(endpoint)?.splice(0) ?? []) c.destroy();
      this.idle.delete(endpoint);
      return;
    }
    for (const list of this.idle.values()) for (const c of list.splice(0)) c.destroy();
  }

  forget(conn: UpstreamConn): void {
    const list = this.idle.get(conn.key);
    if (list === undefined) return;
    const i = list.indexOf(conn);
    if (i >= 0) list.splice(i, 1);
  }

  private address(endpoint: string): Address {
    let a = this.addresses.get(endpoint);
    if (a === undefined) {
      if (endpoint.startsWith("unix:")) a = { hostname: "", port: 0, unix: endpoint.slice(5) };
      else {
        const u = new URL(endpoint);
        a = { hostname: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port || 80) };
      }
      this.addresses.set(endpoint, a);
    }
    return a;
  }
}

/** Where an endpoint is: `http://ip:port`, or `unix:/path` (the raw front's internal listener). */
interface Address {
  readonly hostname: string;
  readonly port: number;
  readonly unix?: string;
}

/** The process-wide pool. */
export const upstreamPool = new UpstreamPool();

function closed(conn: UpstreamConn, error: Error | undefined): void {
  conn.dlList?.disarm(conn);
  if (conn.closed && conn.handler === undefined) {
    upstreamPool.forget(conn);
    return;
  }
  conn.closed = true;
  conn.uncount();
  upstreamPool.forget(conn);
  const h = conn.handler;
  conn.handler = undefined;
  conn.out.discard();
  h?.onClose(conn, error);
}

/** The connection is ready for requests (open, and for TLS verified): its queued bytes go out. */
function ready(s: Socket<UpstreamConn>): void {
  const conn = s.data;
  conn.dlList?.disarm(conn);
  conn.socket = s;
  if (conn.handler === undefined) {
    s.terminate();
    return;
  }
  conn.out.attach(s as Socket<unknown>);
  conn.handler.onOpen(conn);
  // Whatever was queued while connecting is out: a client paused for it may go on.
  if (!conn.out.backlogged) conn.handler?.onDrain(conn);
}

const HANDLERS = {
  open: ready,
  data(s: Socket<UpstreamConn>, chunk: Buffer) {
    const conn = s.data;
    // Bytes on an idle connection are not a response to anything: drop the connection.
    if (conn.handler === undefined) {
      conn.destroy();
      return;
    }
    try {
      conn.handler.onData(conn, chunk);
    } catch (err) {
      // A bug while relaying must end this exchange (a 502 or a cut), not the process.
      const h = conn.handler;
      conn.destroy();
      h?.onClose(conn, err instanceof Error ? err : new Error(String(err)));
    }
  },
  drain(s: Socket<UpstreamConn>) {
    const conn = s.data;
    if (conn.out.flush()) conn.handler?.onDrain(conn);
  },
  close(s: Socket<UpstreamConn>, err?: Error) {
    closed(s.data, err);
  },
  error(s: Socket<UpstreamConn>, err: Error) {
    closed(s.data, err);
  },
  connectError(s: Socket<UpstreamConn>, err: Error) {
    closed(s.data, err);
  },
  timeout(s: Socket<UpstreamConn>) {
    s.data.destroy();
    closed(s.data, new Error("idle timeout"));
  },
};

const TLS_HANDLERS = {
  ...HANDLERS,
  // Connected, not yet verified: nothing may be written (the connect limit still runs).
  open() {},
  handshake(s: Socket<UpstreamConn>, ok: boolean, err: Error | null) {
    if (ok && err === null) ready(s);
    else {
      const conn = s.data;
      const h = conn.handler;
      conn.destroy();
      h?.onClose(conn, new BackendTLSError((err as { code?: string } | null)?.code ?? "handshake failed"));
    }
  },
};
