/**
 * The clocks of one upstream exchange (exchange.ts), kept apart from its protocol work. One clock at a
 * time runs on the exchange itself: the attempt's limit until response headers, then the read-gap clock
 * between response bytes (nginx `proxy_read_timeout`). The send clock (nginx `proxy_send_timeout`) runs
 * beside them while the upstream is not taking request body bytes; it is a separate object, made only
 * for the exchanges whose upstream ever falls behind (uploads), so a plain request allocates nothing
 * for it.
 */
import { type DeadlineList, deadlineList, type Expiring } from "../deadlines.ts";
import type { ExchangeLimits } from "./exchange-limits.ts";

export abstract class ClockedExchange implements Expiring {
  /** The attempt's time limit: on a deadline list (the common case) or, when clipped, a timer. */
  dlList: DeadlineList | undefined;
  dlPrev: Expiring | undefined;
  dlNext: Expiring | undefined;
  dlDue = 0;
  private timer: Timer | undefined;
  private armedMs = 0;
  /** The armed clock is the read-gap one (the response has started), not the attempt's. */
  private readClock = false;
  private sendClock: SendClock | undefined;
  protected sentAt = 0;

  constructor(protected readonly limits: ExchangeLimits) {}

  /** The attempt's limit passed before response headers. */
  protected abstract timedOut(ms: number): void;
  /** No response byte from the upstream for `readGapMs`. */
  protected abstract stalled(): void;
  /** The upstream took no request body byte for `sendGapMs`. */
  abstract sendStalled(): void;

  /** Arms the attempt's limit: the shared list for the route's limit, a timer for a clipped one. */
  protected startClock(ms: number): void {
    this.stopClock();
    this.armedMs = ms;
    if (ms === this.limits.attemptMs && Number.isInteger(ms)) deadlineList(ms).arm(this, this.sentAt);
    else this.timer = setTimeout(() => this.expired(), ms);
  }

  protected stopClock(): void {
    this.readClock = false;
    this.dlList?.disarm(this);
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** Arms the read-gap clock (response started, the client keeping up); idempotent. */
  protected startReadClock(): void {
    const ms = this.limits.readGapMs;
    if (ms === Number.POSITIVE_INFINITY || this.dlList !== undefined) return;
    this.readClock = true;
    deadlineList(ms).arm(this, performance.now());
  }

  /** A response byte came: the read-gap clock starts over. */
  protected touchReadClock(): void {
    const list = this.dlList;
    if (list === undefined) return;
    list.disarm(this);
    list.arm(this, performance.now());
  }

  /** The upstream could not take what was written to it: count until it drains. */
  protected sendBlocked(): void {
    const ms = this.limits.sendGapMs;
    if (ms === Number.POSITIVE_INFINITY) return;
    if (this.sendClock === undefined) this.sendClock = new SendClock(this, ms);
    this.sendClock.start();
  }

  /** The upstream drained (or the exchange ended): the send clock stops. */
  protected sendUnblocked(): void {
    this.sendClock?.stop();
  }

  /** The attempt's limit passed before response headers, or the upstream went silent mid-body (Expiring). */
  expired(): void {
    this.timer = undefined;
    if (this.readClock) this.stalled();
    else this.timedOut(this.armedMs);
  }
}

/** nginx's `proxy_send_timeout`: the time between two successful writes of the request to the upstream. */
class SendClock implements Expiring {
  dlList: DeadlineList | undefined;
  dlPrev: Expiring | undefined;
  dlNext: Expiring | undefined;
  dlDue = 0;

  constructor(
    private readonly owner: ClockedExchange,
    private readonly ms: number,
  ) {}

  start(): void {
    if (this.dlList === undefined) deadlineList(this.ms).arm(this, performance.now());
  }

  stop(): void {
    this.dlList?.disarm(this);
  }

  expired(): void {
    this.owner.sendStalled();
  }
}
