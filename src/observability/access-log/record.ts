/**
 * What the access log knows of a request, and what turns it into a line (access-log.ts writes them).
 */
import type { ArrivedRequest } from "../../proxy/request/observer.ts";

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
  /** The model's backend id of the endpoint used; "" when not forwarded. */
  readonly backend: string;
  /** The status the upstream answered with; 0 when none answered. */
  readonly upstreamStatus: number;
  /** The request as sent: present when the format reads it (`LineFormat.request`). */
  readonly request: ArrivedRequest | undefined;
}

/** What a format reads of the request as sent; the observer takes it only for such formats. */
export interface RequestNeeds {
  /** Lower-case names of the request fields it reads. */
  readonly fields: readonly string[];
  /** It reads the request's length (`$request_length`, `request_length`). */
  readonly length: boolean;
}

/** How a record becomes a line. */
export interface LineFormat {
  /** Undefined: the format reads nothing of the request beyond the record's own fields. */
  readonly request: RequestNeeds | undefined;
  /** The line, newline included; `now` is the write time (`Date.now()`). */
  line(r: AccessRecord, now: number): string;
}

/** Milliseconds rounded to microseconds; -1 stays -1 (not known). */
export function roundMs(ms: number): number {
  return ms < 0 ? -1 : Math.round(ms * 1000) / 1000;
}
