/**
 * A route's time limits and retry policy (kept apart from http-routes.ts, which re-exports them).
 */

/** Time limits in milliseconds. A value of 0 disables that limit (Gateway API `0s`), as the spec asks. */
export interface RouteTimeouts {
  /** Whole request, from receipt to the end of the response headers; 504 when exceeded. */
  readonly requestMs?: number;
  /** One attempt to a backend, from connect to response headers; 504 when exceeded. */
  readonly backendRequestMs?: number;
  /**
   * Longest silence between two reads of the response body once it has started, whole ms (nginx
   * `proxy_read_timeout`); past it the response is cut. Absent: the gateway's (`--upstream-read-timeout-ms`).
   */
  readonly readGapMs?: number;
  /**
   * Longest time the backend may take no byte of the request, whole ms (nginx `proxy_send_timeout`): 504
   * before the response, a cut after. Absent: the gateway's (`--upstream-send-timeout-ms`).
   */
  readonly sendGapMs?: number;
  /**
   * Longest wait for a new connection to an endpoint to open, whole ms (nginx `proxy_connect_timeout`):
   * past it the attempt failed as a connection failure (retried when retries are on, else 504). Absent:
   * only the attempt's limit (`backendRequestMs`) bounds connecting. On the fetch path (`--front bun`, and
   * the raw front's relayed requests) fetch cannot time its connect apart: docs/http.md says how it is
   * bounded there.
   */
  readonly connectMs?: number;
}

/** Retry forwarded requests that fail in one of the listed ways. */
export interface RetryPolicy {
  /** Attempts after the first. */
  readonly attempts: number;
  /** Upstream statuses that trigger a retry (e.g. 502, 503, 504). */
  readonly codes: readonly number[];
  /** Wait between attempts. */
  readonly backoffMs: number;
}

/**
 * How fast a route's response bodies are sent to the client (nginx `limit_rate` and `limit_rate_after`):
 * the first `fullSpeedBytes` of a body go out as fast as the client takes them, the rest at most
 * `bytesPerSecond` on average, counted per response from when its head is sent. Each response is paced on
 * its own: a client with two downloads open gets twice the rate, as with nginx. Absent: no limit.
 */
export interface ResponseBandwidth {
  /** Body bytes per second past `fullSpeedBytes`; a positive whole number. */
  readonly bytesPerSecond: number;
  /** Body bytes sent unpaced first; a whole number, 0: paced from the first byte. */
  readonly fullSpeedBytes: number;
}
