/**
 * What one request holds of its backend's circuit breaker and its route's client zone, as bits, so both
 * fronts take and give back the same counts in the same order: `admit` before anything is sent (all or
 * nothing: a request one cap refuses holds nothing of the other), `release` once when it ends.
 */
import type { CircuitBreaker, ClientConcurrencyZone } from "./breaker.ts";

export const HOLDS_REQUEST = 1;
export const HOLDS_CLIENT = 2;
/** A retry in flight (taken per retry, given back when its attempt ends: the fronts do that). */
export const HOLDS_RETRY = 4;
/** `admit`'s answer when a cap refused the request: 503 at once. */
export const REFUSED = -1;

/** The caps a request is counted in, or REFUSED. The client zone first: one client's flood is its own. */
export function admit(
  breaker: CircuitBreaker | undefined,
  zone: ClientConcurrencyZone | undefined,
  client: string,
): number {
  let holds = 0;
  if (zone !== undefined && !zone.exempts(client)) {
    if (!zone.tryEnter(client)) return REFUSED;
    holds = HOLDS_CLIENT;
  }
  if (breaker !== undefined) {
    if (!breaker.tryRequest()) {
      if (zone !== undefined) zone.leave(client);
      return REFUSED;
    }
    holds |= HOLDS_REQUEST;
  }
  return holds;
}

/** Gives back what `holds` says; returns 0 (what the request then holds). */
export function release(
  holds: number,
  breaker: CircuitBreaker | undefined,
  zone: ClientConcurrencyZone | undefined,
  client: string,
): 0 {
  if ((holds & HOLDS_REQUEST) !== 0) breaker?.endRequest();
  if ((holds & HOLDS_RETRY) !== 0) breaker?.endRetry();
  if ((holds & HOLDS_CLIENT) !== 0) zone?.leave(client);
  return 0;
}
