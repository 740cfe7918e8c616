/**
 * The raw front's pacing of a response body (pace-clock.ts says when bytes may go): the relay writes
 * through it instead of straight to the client; what may not go yet is held (the rest of the upstream
 * read it came in, a view, never a copy) and `write` answers false, which the relay treats as a client
 * that cannot keep up: it stops reading the upstream. A timer releases the held bytes slice by slice;
 * once they are all out and the client has taken them, the owner reads on. So a paced response holds at
 * most what one upstream read brought, as an unpaced one whose client is slow.
 */
import type { ResponseBandwidth } from "../../model/index.ts";
import { PaceClock } from "./pace-clock.ts";

/** Where paced bytes go (the client connection). */
export interface PaceSink {
  /** Writes or queues `bytes`; false when the client is behind (its drain comes later). */
  write(bytes: Uint8Array): boolean;
  readonly closed: boolean;
}

/** Whom a PacedWriter tells that reading may go on. */
export interface PaceOwner {
  /** Everything held went out and the client took it: read the upstream again (as on a client's drain). */
  clientDrained(): void;
}

export class PacedWriter {
  private readonly clock: PaceClock;
  private readonly held: Uint8Array[] = [];
  private heldBytes = 0;
  private timer: Timer | undefined;
  /** Runs once nothing is held any more (the response is complete upstream): see `whenSent`. */
  private afterSent: (() => void) | undefined;

  constructor(
    private readonly sink: PaceSink,
    private readonly owner: PaceOwner,
    bandwidth: ResponseBandwidth,
  ) {
    this.clock = new PaceClock(bandwidth);
  }

  /** Some bytes wait for their time: the upstream stays paused, whatever the client does. */
  get holding(): boolean {
    return this.heldBytes > 0;
  }

  /** Passes on what the pace allows now and holds the rest; false: stop reading the upstream. */
  write(data: Uint8Array): boolean {
    if (this.heldBytes > 0) {
      this.hold(data);
      return false;
    }
    const now = performance.now();
    const n = this.clock.allowance(now);
    if (n >= data.length) {
      this.clock.sent += data.length;
      return this.sink.write(data);
    }
    let rest = data;
    if (n > 0) {
      this.clock.sent += n;
      this.sink.write(data.subarray(0, n));
      rest = data.subarray(n);
    }
    this.hold(rest);
    this.timer = setTimeout(this.release, this.clock.nextSliceMs(this.heldBytes, now));
    return false;
  }

  /** True when bytes are held: `done` then runs once they have all been passed on (instead of now). */
  deferred(done: () => void): boolean {
    if (this.heldBytes === 0) return false;
    this.afterSent = done;
    return true;
  }

  /** The response is over (client gone, upstream cut): drop what is held, stop the timer. */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.held.length = 0;
    this.heldBytes = 0;
    this.afterSent = undefined;
  }

  private hold(data: Uint8Array): void {
    this.held.push(data);
    this.heldBytes += data.length;
  }

  private readonly release = (): void => {
    this.timer = undefined;
    if (this.sink.closed) {
      this.stop();
      return;
    }
    const now = performance.now();
    let n = this.clock.allowance(now);
    let ok = true;
    while (n > 0 && this.heldBytes > 0) {
      const first = this.held[0] as Uint8Array;
      const take = Math.min(n, first.length);
      ok = this.sink.write(take === first.length ? first : first.subarray(0, take));
      this.clock.sent += take;
      this.heldBytes -= take;
      n -= take;
      if (take === first.length) this.held.shift();
      else this.held[0] = first.subarray(take);
    }
    if (this.heldBytes > 0) {
      this.timer = setTimeout(this.release, this.clock.nextSliceMs(this.heldBytes, now));
      return;
    }
    const done = this.afterSent;
    this.afterSent = undefined;
    if (done !== undefined) done();
    // A client still behind drains later, and its drain resumes the upstream (the exchange's clientDrained).
    else if (ok) this.owner.clientDrained();
  };
}
