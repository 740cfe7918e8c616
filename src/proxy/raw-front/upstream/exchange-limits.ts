/**
 * The time limits and retry policy of one upstream exchange (exchange.ts): what FastExchange takes from
 * its route (forward.ts's rules) and RelayedExchange from the listener's settings. `attemptMs` per
 * attempt until response headers, `deadline` over all attempts, retries only without a body; 502 when
 * the upstream cannot be reached or resets before answering, 504 on timeout. Once the response has
 * started, the upstream may stay silent for at most `readGapMs` between two reads (nginx's
 * `proxy_read_timeout`); the clock stops while the client is the one not keeping up. Past it the
 * response is cut (the head is out already). While the upstream takes no request byte (a body it does not
 * read), `sendGapMs` runs (nginx's `proxy_send_timeout`): past it, 504 before the response, a cut after.
 * A new connection that does not open within `connectMs` (nginx's `proxy_connect_timeout`; the pool
 * times it) is a failed connection: retried when retries are on, else 504. `connectionCaps`: the
 * backend's breaker when it counts upstream connections (pool.ts); a connection it refuses is a 503.
 */
import type { CircuitBreaker } from "../../circuit-breaker/breaker.ts";

/** Methods a request may be sent again for, on a fresh connection, when a pooled one turned out closed. */
export const IDEMPOTENT: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);
/** A request that cannot be retried on a stale connection takes only one idle for less than this. */
export const UNSAFE_MAX_IDLE_MS = 2000;

/** Time limits and retry policy of one exchange. */
export interface ExchangeLimits {
  /** Per attempt, to response headers (Infinity: none). */
  readonly attemptMs: number;
  /** Between two reads of the response body, whole ms (Infinity: none). */
  readonly readGapMs: number;
  /** While the upstream takes no request byte, whole ms (Infinity: none). */
  readonly sendGapMs: number;
  /** For a new upstream connection to open, whole ms (nginx `proxy_connect_timeout`; Infinity: none). */
  readonly connectMs: number;
  /** `performance.now()` after which no attempt starts (Infinity: none). */
  readonly deadline: number;
  readonly attempts: number;
  readonly retryCodes: readonly number[];
  readonly backoffMs: number;
  readonly connectionCaps?: CircuitBreaker | undefined;
}

export const NO_LIMITS: ExchangeLimits = {
  attemptMs: Number.POSITIVE_INFINITY,
  readGapMs: Number.POSITIVE_INFINITY,
  sendGapMs: Number.POSITIVE_INFINITY,
  connectMs: Number.POSITIVE_INFINITY,
  deadline: Number.POSITIVE_INFINITY,
  attempts: 1,
  retryCodes: [],
  backoffMs: 0,
};
