/**
 * A route's balancing (model `ForwardAction.balancing`), compiled: one picker per backend choice, and the
 * session lookup over every choice the route may pick. Routes without it (round robin, no session) have
 * no RouteBalancer and take the untouched fast path (`nextEndpoint`). Each request on a balanced route
 * takes one EndpointLease, which both fronts ask for each attempt's endpoint and tell when it ends.
 */
import type { Balancing, SessionPersistence } from "../../model/index.ts";
import {
  type BackendChoice,
  type ChoiceLease,
  type CompiledBackend,
  type ForwardBalancer,
  usableEndpoint,
} from "../table.ts";
import {
  type EndpointPicker,
  EwmaPicker,
  LeastRequestPicker,
  randomPicker,
  roundRobinPicker,
} from "./endpoint-picker.ts";
import { consistentHashPicker } from "./hash-ring.ts";
import { type BalanceInput, cookieValue } from "./request-input.ts";
import { endpointToken, sessionField, tokenIndex } from "./session-token.ts";
import { dueForReissue, type SessionTimeouts, signToken, verifyToken } from "./timed-token.ts";

/** The session's timeouts, or undefined when it has none (plain tokens: nothing signed, nothing read). */
function timeoutsOf(s: SessionPersistence): SessionTimeouts | undefined {
  if (s.absoluteTimeoutMs === undefined && s.idleTimeoutMs === undefined) return undefined;
  return {
    ...(s.absoluteTimeoutMs !== undefined ? { absoluteMs: s.absoluteTimeoutMs } : {}),
    ...(s.idleTimeoutMs !== undefined ? { idleMs: s.idleTimeoutMs } : {}),
  };
}

export class RouteBalancer implements ForwardBalancer {
  /** Parallel to the route's choices; undefined where a choice has no endpoints to pick from. */
  private readonly pickers: (EndpointPicker | undefined)[];
  /** The session's timeouts; undefined: plain tokens. */
  readonly timeouts: SessionTimeouts | undefined;

  constructor(
    private readonly balancing: Balancing,
    private readonly choices: readonly BackendChoice[],
    private readonly pickChoice: () => BackendChoice | undefined,
    /** The weights of `choices`: a session never pins to a weight-0 choice. */
    private readonly weights: readonly number[],
  ) {
    this.timeouts = balancing.session === undefined ? undefined : timeoutsOf(balancing.session);
    this.pickers = choices.map((c) =>
      c.backend === undefined || c.backend.bases.length === 0 ? undefined : pickerFor(balancing, c.backend),
    );
  }

  get session(): SessionPersistence | undefined {
    return this.balancing.session;
  }

  /** The request's choice and endpoint plan; undefined when no choice has a positive weight. */
  lease(input: BalanceInput): EndpointLease | undefined {
    const session = this.balancing.session;
    if (session !== undefined) {
      const raw =
        session.type === "Cookie"
          ? cookieValue(input.header("cookie"), session.name)
          : input.header(session.name.toLowerCase());
      let token = raw;
      let started: number | undefined;
      let reissue = false;
      const timeouts = this.timeouts;
      if (raw !== null && timeouts !== undefined) {
        // A timed token that fails verification or whose session ended counts as absent.
        const now = Date.now();
        const t = verifyToken(session.name, raw, timeouts, now);
        token = t?.endpoint ?? null;
        started = t?.startMs;
        reissue = t !== undefined && dueForReissue(t, timeouts, now);
      }
      if (token !== null) {
        for (let c = 0; c < this.choices.length; c++) {
          const backend = this.choices[c]?.backend;
          if (backend === undefined || (this.weights[c] as number) <= 0) continue;
          const i = tokenIndex(backend).get(token);
          if (i === undefined) continue;
          const lease = new EndpointLease(this, this.choices[c] as BackendChoice, this.pickers[c], input, i);
          lease.sessionStart = started;
          lease.reissue = reissue;
          return lease;
        }
      }
    }
    const choice = this.pickChoice();
    if (choice === undefined) return undefined;
    return new EndpointLease(this, choice, this.pickers[this.choices.indexOf(choice)], input, -1);
  }
}

/**
 * The route's algorithm when it sets one other than round robin (an annotation, a route-level choice);
 * else the backend's own (a BackendTrafficPolicy's `loadBalancer` on its Service); else round robin.
 */
function pickerFor(b: Balancing, backend: CompiledBackend): EndpointPicker {
  const own = backend.balancing;
  const algorithm = b.algorithm !== "RoundRobin" || own === undefined ? b.algorithm : own.algorithm;
  const hashKey = b.algorithm !== "RoundRobin" ? b.hashKey : own?.hashKey;
  switch (algorithm) {
    case "LeastRequest":
      return new LeastRequestPicker(backend);
    case "EWMA":
      return new EwmaPicker(backend);
    case "Random":
      return randomPicker(backend);
    case "ConsistentHash":
      return consistentHashPicker(backend, hashKey ?? [], roundRobinPicker(backend), b.hashSubsetSize);
    default:
      return roundRobinPicker(backend);
  }
}

/** One request's endpoints: the pinned one (a session) or the picker's, attempt by attempt. */
export class EndpointLease implements ChoiceLease {
  /** The session token field to add to the response, when this request was (re)pinned. */
  responseField: readonly [string, string] | undefined;
  private attempt = 0;
  /** The endpoint in use (-1: none), and the one the last attempt used (a retry avoids it). */
  private current = -1;
  private last = -1;
  private startedAt = 0;
  /** A timed session's start (its token verified); a new session starts at its first token. */
  sessionStart: number | undefined;
  /** The timed token is valid but its last-use stamp is due for a refresh (idleTimeout). */
  reissue = false;

  constructor(
    private readonly owner: RouteBalancer,
    readonly choice: BackendChoice,
    private readonly picker: EndpointPicker | undefined,
    private readonly input: BalanceInput,
    /** The endpoint the session token names; -1: none (yet). */
    private pinned: number,
  ) {}

  /** The endpoint base for the next attempt. Called only when the choice's backend has endpoints. */
  next(): string {
    const backend = this.choice.backend as CompiledBackend;
    const picker = this.picker as EndpointPicker;
    this.end(false);
    this.attempt++;
    const session = this.owner.session;
    let i: number;
    const stay = this.pinned >= 0 && (this.attempt === 1 || session?.changeOnFailure !== true);
    if (stay) i = this.pinned;
    else i = picker.pick(this.input, this.last);
    // An ejected endpoint (health/) takes nothing: the next one in service does, and its client moves.
    const health = backend.health;
    if (health !== undefined && health.ejectedCount > 0)
      i = usableEndpoint(backend, i, stay || this.last < 0 ? undefined : backend.bases[this.last]);
    if (session !== undefined && (i !== this.pinned || this.reissue)) {
      this.pinned = i;
      this.reissue = false;
      const endpoint = endpointToken(backend.bases[i] as string);
      let token = endpoint;
      if (this.owner.timeouts !== undefined) {
        // Moving to another endpoint continues the session: its start stays, so absoluteTimeout holds.
        const now = Date.now();
        this.sessionStart ??= now;
        token = signToken(session.name, { endpoint, startMs: this.sessionStart, lastMs: now });
      }
      this.responseField = sessionField(session, token, this.input.https, this.input.header("user-agent"));
    }
    picker.started(i);
    this.current = i;
    this.last = i;
    this.startedAt = performance.now();
    return backend.bases[i] as string;
  }

  /** The current attempt ended: response headers arrived, or it failed. Idempotent. */
  end(failed: boolean): void {
    const i = this.current;
    if (i < 0) return;
    this.current = -1;
    (this.picker as EndpointPicker).ended(i, performance.now() - this.startedAt, failed);
  }
}
