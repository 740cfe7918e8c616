/**
 * Access log: one JSON line per request on stdout, in the same shape as application logs
 * (`time`, `level`, `msg` then fields), sampled by `--access-log-sample` (0 = off, 1 = every request).
 */

/** What one access-log line says about a request. */
export interface AccessRecord {
  /** Request id sent upstream (X-Request-Id). */
  readonly requestId: string;
  readonly client: string;
  readonly method: string;
  readonly host: string;
  /** Normalised path, without the query (queries may carry secrets). */
  readonly path: string;
  readonly status: number;
  /** Response body bytes when known (Content-Length), else -1. */
  readonly bytes: number;
  /** Milliseconds to response headers. */
  readonly durationMs: number;
  /** `ip:port` of the endpoint, "" when not forwarded. */
  readonly upstream: string;
  /** Milliseconds the upstream took to answer with headers, -1 when not forwarded. */
  readonly upstreamMs: number;
  /** Configured route name, "" when none matched. */
  readonly route: string;
  /** W3C trace id of the request (tracing on, and it was sampled or the client sent one); "" otherwise. */
  readonly traceId: string;
}

export type LineSink = (line: string) => void;

export class AccessLog {
  /** @param sample share of requests logged, 0…1 */
  constructor(
    readonly sample: number,
    private readonly sink: LineSink = (line) => process.stdout.write(line),
  ) {}

  /** Cheap check for the hot path: build a record only when this returns true. */
  wants(): boolean {
    return this.sample >= 1 || (this.sample > 0 && Math.random() < this.sample);
  }

  write(r: AccessRecord): void {
    this.sink(
      `${JSON.stringify({
        time: new Date().toISOString(),
        level: "info",
        msg: "access",
        request_id: r.requestId,
        client: r.client,
        method: r.method,
        host: r.host,
        path: r.path,
        status: r.status,
        bytes: r.bytes,
        duration_ms: round(r.durationMs),
        upstream: r.upstream,
        upstream_ms: round(r.upstreamMs),
        route: r.route,
        trace_id: r.traceId,
      })}\n`,
    );
  }
}

function round(ms: number): number {
  return ms < 0 ? -1 : Math.round(ms * 1000) / 1000;
}
