/**
 * The fast path: a request on a route `isFastRoute` accepts, relayed straight to one of its backend's
 * endpoints over a pooled connection (upstream/exchange.ts does the relaying). The head sent is built
 * as handler.ts + forward.ts build it (X-Forwarded-*, X-Request-Id, hop-by-hop fields dropped, the
 * route's header modifiers and URL rewrite), and the route's time limits and retries apply.
 */

import { limitedLog } from "../../observability/log-limit.ts";
import type { CompiledBackendTLS } from "../backend-tls/options.ts";
import { OVERLOADED_HEADER } from "../circuit-breaker/breaker.ts";
import { admit, HOLDS_RETRY, REFUSED, release } from "../circuit-breaker/hold.ts";
import type { RequestContext } from "../filters/filter-types.ts";
import { LOCAL_FAILURE } from "../health/outlier-detector.ts";
import { limit } from "../request/forward.ts";
import type { RequestInfo } from "../request/observer.ts";
import type { RequestTarget } from "../request/request-target.ts";
import { SOCKET_TIMER_STEP_S } from "../settings.ts";
import {
  type BackendChoice,
  type ChoiceLease,
  type CompiledBackend,
  type CompiledRoute,
  nextEndpoint,
  PATH_REGEX,
} from "../table.ts";
import type { ClientSide } from "./client-side.ts";
import type { ResponseHeaderEdit } from "./http1/head-to-client.ts";
import type { ClaimEdit } from "./http1/head-to-upstream.ts";
import { filteredUpstreamHead, plainUpstreamHead, type UpstreamRequest } from "./http1/head-to-upstream.ts";
import { BODY_NONE, type RequestHead } from "./http1/request-head.ts";
import { traceFilter, withTraceEdit } from "./trace-edit.ts";
import { UpstreamExchange } from "./upstream/exchange.ts";
import type { ExchangeLimits } from "./upstream/exchange-limits.ts";
import { TLS_FAILED, type UpstreamConn } from "./upstream/pool.ts";
import { switchingHead, UpgradePipe, withUpgrade } from "./websocket-pipe.ts";

export class FastExchange extends UpstreamExchange {
  private readonly backend: CompiledBackend;
  private endpoint = "";
  /** The endpoint the last failed attempt (or retried response) went to: a retry goes elsewhere if it can. */
  private failedEndpoint: string | undefined;
  /** Request body bytes taken so far, counted only on a route with a body limit. */
  private bodyBytes = 0;
  /** What this request holds of its backend's breaker and its route's client zone (circuit-breaker/). */
  private holds = 0;
  /** The client counted in the route's zone (the connection's may change with its next request). */
  private zoneClient = "";
  /** A WebSocket upgrade (dispatch.ts `isPipedUpgrade`): its answer, then its frames, pass through it. */
  private readonly pipe: UpgradePipe | undefined;

  constructor(
    conn: ClientSide,
    head: RequestHead,
    private readonly target: RequestTarget,
    private readonly route: CompiledRoute,
    private readonly choice: BackendChoice,
    private readonly info: RequestInfo | undefined,
    /** The route's balancing for this request (balancing/); undefined: round robin. */
    private readonly lease: ChoiceLease | undefined,
    /** The edge guards' request edit (claim headers), run before the route's request filters. */
    private readonly guardRequest?: (ctx: RequestContext) => undefined,
    /** The edge guards' response edit (limit headers), run after the route's response filters. */
    guardResponse?: ResponseHeaderEdit,
    /** `guardRequest` as data, when the byte-built head can apply it (edge-guards.ts claimEditOf). */
    private readonly guardEdit?: ClaimEdit,
  ) {
    super(
      conn,
      head,
      routeLimits(route, head, conn, choice.backend),
      choice.filters.response,
      lease === undefined ? guardResponse : new LeaseEdit(lease, guardResponse),
      route.responseBandwidth,
    );
    this.backend = choice.backend as CompiledBackend;
    this.compression = this.backend.compression;
    if (info !== undefined) info.client = conn.clientIp;
    if (head.upgrade !== null) {
      const filters = choice.filters.response;
      const server = conn.state0.settings.serverHeader;
      this.pipe = new UpgradePipe(conn, (res) => switchingHead(res, server, filters, this.responseEdit));
      // Idle both ways for the route's read timeout ends the pipe, as nginx's proxy_read_timeout does
      // (never sooner: a timer step more, as the body clock asks, settings.ts).
      const idleMs = this.limits.readGapMs;
      this.tunnelIdleSeconds = Number.isFinite(idleMs) ? Math.ceil(idleMs / 1000) + SOCKET_TIMER_STEP_S : 0;
    }
    // One undefined check each for a backend without a breaker and a route without a client cap. A
    // WebSocket holds neither, as on the Bun front (its upgrade is not a request the breaker counts).
    if (head.upgrade === null && (this.backend.breaker !== undefined || route.clientZone !== undefined)) {
      this.zoneClient = conn.clientIp;
      const holds = admit(this.backend.breaker, route.clientZone, this.zoneClient);
      if (holds === REFUSED) {
        if (info !== undefined) info.backend = this.backend.id;
        this.fail(503, overloadedEdit(this.responseEdit));
        return;
      }
      this.holds = holds;
    }
    this.start();
  }

  override onData(up: UpstreamConn, chunk: Buffer): void {
    if (this.pipe === undefined) super.onData(up, chunk);
    else this.pipe.data(chunk, (bytes) => super.onData(up, bytes));
  }

  /** The listener is stopping: an upgraded exchange closes its WebSocket (websocket-pipe.ts). */
  drain(): void {
    this.pipe?.drain();
  }

  protected override released(): void {
    this.pipe?.stop();
    if (this.holds !== 0)
      this.holds = release(this.holds, this.backend.breaker, this.route.clientZone, this.zoneClient);
  }

  protected overCap(): void {
    this.lease?.end(true); // a refused attempt: no latency sample for an endpoint at its cap
    this.fail(503, overloadedEdit(this.responseEdit));
  }

  protected override canRetry(): boolean {
    if (!super.canRetry()) return false;
    const breaker = this.backend.breaker;
    if (breaker === undefined || (this.holds & HOLDS_RETRY) !== 0) return true;
    if (!breaker.tryRetry()) return false;
    this.holds |= HOLDS_RETRY;
    return true;
  }

  /** The retry's attempt has its outcome: it is no longer a retry in flight. */
  private retryDone(): void {
    if ((this.holds & HOLDS_RETRY) === 0) return;
    this.holds &= ~HOLDS_RETRY;
    this.backend.breaker?.endRetry();
  }

  /**
   * A body past the route's limit (only a chunked one: dispatch.ts refused a Content-Length past it) is
   * cut before the chunk that passes it: 413, or a reset once the response has started.
   */
  override body(buf: Buffer, start: number, end: number): void {
    const max = this.route.requestBodyMaxBytes;
    if (max !== undefined) {
      this.bodyBytes += end - start;
      if (this.bodyBytes > max) {
        this.cutRequest(413);
        return;
      }
    }
    super.body(buf, start, end);
  }

  protected pickEndpoint(): string {
    const endpoint =
      this.lease === undefined ? nextEndpoint(this.backend, this.failedEndpoint) : this.lease.next();
    this.endpoint = endpoint;
    const info = this.info;
    if (info !== undefined) {
      info.upstream = endpoint;
      info.backend = this.backend.id;
      if (info.trace !== undefined) {
        info.trace.backend = this.backend.id;
        info.trace.attempts++;
      }
    }
    return endpoint;
  }

  protected upstreamTLS(): CompiledBackendTLS | undefined {
    return this.backend.tls;
  }

  protected requestHead(endpoint: string): UpstreamRequest {
    const req = this.forwardedHead(endpoint);
    return this.head.upgrade === null ? req : withUpgrade(req);
  }

  private forwardedHead(endpoint: string): UpstreamRequest {
    const state = this.conn.state0;
    const hop = {
      peer: this.conn.origin.peer,
      peerTrusted: this.conn.origin.peerTrusted,
      scheme: state.table.scheme,
      port: state.table.port || state.boundPort,
    };
    // "http://" is 7 characters: the rest is the authority, the Host when the client sent none.
    const endpointHost = endpoint.slice(7);
    const own = this.choice.filters.request;
    // A sampled request's upstream gets our span as its parent (trace-edit.ts).
    const trace = this.info?.trace;
    const traced = trace?.sampled === true ? trace : undefined;
    if (own.length === 0 && (this.guardRequest === undefined || this.guardEdit !== undefined)) {
      const edit = traced === undefined ? this.guardEdit : withTraceEdit(traced, this.guardEdit);
      return plainUpstreamHead(this.head, this.target, hop, endpointHost, edit);
    }
    let filters = this.guardRequest === undefined ? own : [this.guardRequest, ...own];
    if (traced !== undefined) filters = [traceFilter(traced), ...filters];
    const prefix = this.route.pathType === PATH_REGEX ? "" : this.route.pathValue;
    return filteredUpstreamHead(this.head, this.target, hop, endpointHost, prefix, filters);
  }

  override abort(): void {
    super.abort();
    this.lease?.end(false);
  }

  protected headersArrived(status: number): void {
    this.lease?.end(false);
    if (this.holds !== 0) this.retryDone();
    this.backend.health?.report(this.endpoint, status);
    // Read only if this response is retried (a code of the route's retry policy).
    this.failedEndpoint = this.endpoint;
    if (this.info !== undefined) {
      this.info.upstreamMs = performance.now() - this.sentAt;
      this.info.upstreamStatus = status;
    }
  }

  protected attemptFailed(timedOut: boolean, attempt: number, error: string): void {
    this.lease?.end(true);
    if (this.holds !== 0) this.retryDone();
    this.backend.health?.report(this.endpoint, LOCAL_FAILURE);
    this.failedEndpoint = this.endpoint;
    const tlsRefused = error.startsWith(TLS_FAILED);
    const route = this.route.name;
    const msg = timedOut ? "upstream timed out" : tlsRefused ? "upstream TLS failed" : "upstream unreachable";
    limitedLog("warn", route, msg, {
      route,
      backend: this.backend.id,
      endpoint: this.endpoint,
      attempt,
      error: tlsRefused ? `${error} (expected ${this.backend.tls?.expects})` : error,
    });
    const kind = timedOut ? "timeout" : tlsRefused ? "tls" : "connect";
    this.conn.state0.settings.observer?.upstreamFailed?.(this.backend.id, kind);
  }

  protected observe(status: number, bytes: number): void {
    // A 101 (a WebSocket piped from here on) is the backend's answer, which headersArrived sees for others.
    if (status === 101) this.headersArrived(101);
    const info = this.info;
    if (info === undefined) return;
    this.conn.state0.settings.observer?.endRaw?.(info, {
      method: this.head.method,
      host: this.head.host ?? "",
      path: this.target.path,
      requestId: this.requestId,
      status,
      bytes,
      head: this.head,
    });
  }
}

const NO_FIELDS: readonly (readonly [string, string])[] = [];
const OVERLOADED: readonly (readonly [string, string])[] = [[OVERLOADED_HEADER, "true"]];

/** The guards' response fields and the overloaded mark, for a 503 a cap answered. */
function overloadedEdit(guard: ResponseHeaderEdit | undefined): ResponseHeaderEdit {
  return { append: guard?.append ?? NO_FIELDS, set: [...(guard?.set ?? NO_FIELDS), ...OVERLOADED] };
}

/**
 * The guards' response fields plus the session token the lease issued, read when the head is built
 * (the token is known only once an endpoint was picked; a retry may change it).
 */
class LeaseEdit implements ResponseHeaderEdit {
  constructor(
    private readonly lease: ChoiceLease,
    private readonly guard: ResponseHeaderEdit | undefined,
  ) {}
  get append(): readonly (readonly [string, string])[] {
    const own = this.guard?.append ?? NO_FIELDS;
    const field = this.lease.responseField;
    return field === undefined ? own : [...own, field];
  }
  get set(): readonly (readonly [string, string])[] {
    return this.guard?.set ?? NO_FIELDS;
  }
}

/** forward.ts's limits: `backendRequestMs` (else `requestMs`, else the default) per attempt, `requestMs` in all. */
function routeLimits(
  route: CompiledRoute,
  head: RequestHead,
  conn: ClientSide,
  backend: CompiledBackend | undefined,
): ExchangeLimits {
  const t = route.timeouts;
  const defaultMs = conn.state0.settings.defaultUpstreamTimeoutMs;
  const retry = route.retry;
  return {
    attemptMs: limit(t?.backendRequestMs ?? t?.requestMs ?? defaultMs),
    readGapMs: limit(t?.readGapMs ?? conn.state0.settings.upstreamReadTimeoutMs),
    sendGapMs: limit(t?.sendGapMs ?? conn.state0.settings.upstreamSendTimeoutMs),
    connectMs: t?.connectMs === undefined ? Number.POSITIVE_INFINITY : limit(t.connectMs),
    deadline: t?.requestMs ? performance.now() + t.requestMs : Number.POSITIVE_INFINITY,
    // A WebSocket handshake is tried once, as on the Bun front.
    attempts:
      retry !== undefined && head.bodyKind === BODY_NONE && head.upgrade === null
        ? 1 + Math.max(0, retry.attempts)
        : 1,
    retryCodes: retry?.codes ?? [],
    backoffMs: retry?.backoffMs ?? 0,
    connectionCaps: backend?.breaker?.capsConnections === true ? backend.breaker : undefined,
  };
}
