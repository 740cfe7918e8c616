/**
 * Time limits for many requests without a timer for each. Requests with the same limit expire in the
 * order they started, so each limit (ms) has a FIFO list of armed requests, linked through their own
 * fields, and one timer for the oldest. Arming is an append; disarming (the common case: the response
 * came) is an unlink; neither calls into the runtime. The timer fires at the oldest deadline, expires
 * what is due and re-arms for the next; when the oldest went away meanwhile it re-arms for the new
 * oldest. So a busy limit costs about one timer per period, not one setTimeout and one clearTimeout per
 * request (149 ns of native calls and a Timer object each, measured here).
 */

/** Something with a deadline: the list links live on it, so arming allocates nothing. */
export interface Expiring {
  /** Links and due time, owned by the list; undefined list: not armed. */
  dlList: DeadlineList | undefined;
  dlPrev: Expiring | undefined;
  dlNext: Expiring | undefined;
  dlDue: number;
  /** The deadline passed (called once, already disarmed). */
  expired(): void;
}

export class DeadlineList {
  private head: Expiring | undefined;
  private tail: Expiring | undefined;
  private timer: Timer | undefined;

  constructor(readonly ms: number) {}

  get empty(): boolean {
    return this.head === undefined;
  }

  /** Arms `e` to expire `ms` after `now` (`performance.now()`); `e` must not be armed. */
  arm(e: Expiring, now: number): void {
    e.dlList = this;
    e.dlDue = now + this.ms;
    e.dlNext = undefined;
    e.dlPrev = this.tail;
    if (this.tail === undefined) this.head = e;
    else this.tail.dlNext = e;
    this.tail = e;
    if (this.timer === undefined) this.schedule(e.dlDue, now);
  }

  /** Takes `e` out of the list (it will not expire). */
  disarm(e: Expiring): void {
    if (e.dlList !== this) return;
    const { dlPrev: prev, dlNext: next } = e;
    if (prev === undefined) this.head = next;
    else prev.dlNext = next;
    if (next === undefined) this.tail = prev;
    else next.dlPrev = prev;
    e.dlList = e.dlPrev = e.dlNext = undefined;
    // The timer stays: when it fires it finds the new oldest not due and re-arms, or the list empty.
  }

  private schedule(due: number, now: number): void {
    this.timer = setTimeout(this.fire, Math.max(0, due - now));
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    const now = performance.now();
    // A timer may fire a fraction of a millisecond early (whole-ms scheduling): that counts as due.
    for (let e = this.head; e !== undefined && e.dlDue <= now + 0.5; e = this.head) {
      this.disarm(e);
      try {
        e.expired();
      } catch {
        // One request's failure must not stop the others from expiring; expired() handles its own errors.
      }
    }
    if (this.head !== undefined && this.timer === undefined) this.schedule(this.head.dlDue, now);
  };
}

/** The process-wide lists, one per limit in whole ms. */
const lists = new Map<number, DeadlineList>();

/** The list for a limit of `ms` (a positive whole number). */
export function deadlineList(ms: number): DeadlineList {
  let l = lists.get(ms);
  if (l === undefined) {
    l = new DeadlineList(ms);
    lists.set(ms, l);
  }
  return l;
}
