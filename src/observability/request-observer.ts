import {
  type MirrorOutcome,
  type RawExchange,
  type RequestInfo,
  type RequestObserver,
  startedInfo,
  type UpstreamFailure,
} from "../proxy/request/observer.ts";
import type { AccessLog } from "./access-log/access-log.ts";
import { HeadArrival, requestArrival } from "./access-log/arrived-request.ts";
import type { GatewayMetrics } from "./metrics.ts";
import type { SpanExport } from "./tracing/span-export.ts";
import type { RequestTrace, TraceSampler } from "./tracing/trace-context.ts";

/**
 * The proxy's observer: every request counts in the per-route metrics; a sampled share is written to
 * the access log. The record's path has no query (queries carry tokens; only a template naming
 * `$request_uri`, `$request` or `$args` writes it, as nginx does), its host is as sent. With tracing on, a
 * sampled request's span is handed to the export once it has been answered.
 */
export class MetricsAndAccessLog implements RequestObserver {
  readonly sampler: TraceSampler | undefined;
  private readonly spans: SpanExport | undefined;

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly accessLog: AccessLog | undefined,
    tracing?: { readonly sampler: TraceSampler; readonly spans: SpanExport },
  ) {
    this.sampler = tracing?.sampler;
    this.spans = tracing?.spans;
  }

  /**
   * A format that reads the request as sent gets it here, before the request path edits its headers: of
   * every request, since the share to log is the matched route's (`logShare`), known only later.
   */
  begin(req: Request): RequestInfo {
    const info = startedInfo();
    const needs = this.accessLog?.format.request;
    if (needs !== undefined) info.arrived = requestArrival(req, needs.fields, needs.length);
    return info;
  }

  end(info: RequestInfo, req: Request, res: Response): void {
    const ms = performance.now() - info.started;
    const length = res.headers.get("content-length");
    const bytes = length === null ? -1 : Number(length);
    this.metrics.request(info.route || undefined, res.status, ms / 1000, bytes);
    const log = this.accessLog;
    const trace = info.trace;
    const traced = trace?.sampled === true && this.spans !== undefined;
    const logged =
      log !== undefined &&
      (log.format.request === undefined || info.arrived !== undefined) &&
      log.wants(info.logShare);
    if (!traced && !logged) return;
    const url = req.url;
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const queryStart = url.indexOf("?", pathStart);
    // The client's Host, not the one a URLRewrite set on the request for fetch.
    const host = (info.host === undefined ? req.headers.get("host") : info.host) ?? "";
    const path = pathStart < 0 ? "/" : url.slice(pathStart, queryStart < 0 ? undefined : queryStart);
    if (traced) this.endSpan(info, req.method, host, path, res.status);
    if (!logged) return;
    log.write({
      requestId: req.headers.get("x-request-id") ?? "",
      client: info.client,
      method: req.method,
      host,
      path,
      status: res.status,
      bytes,
      durationMs: ms,
      upstream: info.upstream.replace(/^https?:\/\//, ""),
      upstreamMs: info.upstreamMs,
      route: info.route,
      traceId: trace?.traceId ?? "",
      backend: info.backend ?? "",
      upstreamStatus: info.upstreamStatus ?? 0,
      request: info.arrived,
    });
  }

  upstreamFailed(backend: string, kind: UpstreamFailure): void {
    this.metrics.upstreamError(backend, kind);
  }

  connectionRefused(reason: string): void {
    this.metrics.connectionRefused(reason);
  }

  headerFieldsDropped(listener: string, count: number): void {
    this.metrics.headerFieldsDropped(listener, count);
  }

  mirrored(mirror: string, outcome: MirrorOutcome): void {
    this.metrics.mirrored(mirror, outcome);
  }

  tlsHandshakeFailed(listener: string, reason: string): void {
    this.metrics.tlsHandshakeFailure(listener, reason);
  }

  /** The raw-socket front's fast path: the same metrics and access-log line, from plain fields. */
  endRaw(info: RequestInfo, ex: RawExchange): void {
    const ms = performance.now() - info.started;
    this.metrics.request(info.route || undefined, ex.status, ms / 1000, ex.bytes);
    if (info.trace?.sampled === true && this.spans !== undefined)
      this.endSpan(info, ex.method, ex.host, ex.path, ex.status);
    const log = this.accessLog;
    if (log === undefined || !log.wants(info.logShare)) return;
    log.write({
      requestId: ex.requestId,
      client: info.client,
      method: ex.method,
      host: ex.host,
      path: ex.path,
      status: ex.status,
      bytes: ex.bytes,
      durationMs: ms,
      upstream: info.upstream.replace(/^https?:\/\//, ""),
      upstreamMs: info.upstreamMs,
      route: info.route,
      traceId: info.trace?.traceId ?? "",
      backend: info.backend ?? "",
      upstreamStatus: info.upstreamStatus ?? 0,
      request:
        log.format.request === undefined || ex.head === undefined ? undefined : new HeadArrival(ex.head),
    });
  }

  private endSpan(info: RequestInfo, method: string, host: string, path: string, status: number): void {
    (this.spans as SpanExport).end(info.trace as RequestTrace, {
      method,
      host,
      path,
      status,
      route: info.route,
      endpoint: info.upstream.replace(/^https?:\/\//, ""),
      client: info.client,
      started: info.started,
    });
  }
}
