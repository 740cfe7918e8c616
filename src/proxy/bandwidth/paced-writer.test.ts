import { expect, test } from "bun:test";
import { PacedWriter, type PaceSink } from "./paced-writer.ts";

/** A client that takes everything, or nothing past `room` bytes (then answers false, as a backlogged Outbox). */
class Client implements PaceSink {
  readonly got: number[] = [];
  closed = false;
  constructor(private room = Number.POSITIVE_INFINITY) {}
  write(bytes: Uint8Array): boolean {
    this.got.push(bytes.length);
    this.room -= bytes.length;
    return this.room >= 0;
  }
  get total(): number {
    return this.got.reduce((a, b) => a + b, 0);
  }
}

class Owner {
  drained = 0;
  clientDrained(): void {
    this.drained++;
  }
}

const KIB = 1024;

test("what the pace allows goes at once; the rest is held, false tells the relay to stop reading", async () => {
  const client = new Client();
  const owner = new Owner();
  const pacer = new PacedWriter(client, owner, { bytesPerSecond: 64 * KIB, fullSpeedBytes: 16 * KIB });
  expect(pacer.write(new Uint8Array(8 * KIB))).toBe(true);
  expect(pacer.write(new Uint8Array(24 * KIB))).toBe(false);
  expect(client.total).toBeGreaterThanOrEqual(16 * KIB);
  expect(client.total).toBeLessThan(17 * KIB);
  expect(pacer.holding).toBe(true);
  // More while held is held too, in order.
  expect(pacer.write(new Uint8Array(KIB))).toBe(false);
  await Bun.sleep(80);
  // About 64 KiB × 80 ms: some released, not all (all takes about 265 ms).
  expect(client.total).toBeGreaterThan(18 * KIB);
  expect(client.total).toBeLessThan(33 * KIB);
  expect(owner.drained).toBe(0);
  // 17 KiB at 64 KiB/s: about 265 ms from the start.
  await Bun.sleep(300);
  expect(client.total).toBe(33 * KIB);
  expect(pacer.holding).toBe(false);
  expect(owner.drained).toBe(1);
});

test("the release is sliced: about 20 writes a second, none larger than the pace allows", async () => {
  const client = new Client();
  const pacer = new PacedWriter(client, new Owner(), { bytesPerSecond: 40 * KIB, fullSpeedBytes: 0 });
  const t0 = performance.now();
  pacer.write(new Uint8Array(10 * KIB));
  await Bun.sleep(300);
  const ms = performance.now() - t0;
  // Six wake-ups on time; fewer when timers run late on a loaded machine, never many more.
  expect(client.got.length).toBeGreaterThanOrEqual(2);
  expect(client.got.length).toBeLessThanOrEqual(8);
  expect(client.total).toBeLessThanOrEqual(Math.ceil((40 * KIB * ms) / 1000) + 1);
  pacer.stop();
});

test("deferred: the end waits for the held bytes; nothing held, it is not deferred", async () => {
  const client = new Client();
  const owner = new Owner();
  const pacer = new PacedWriter(client, owner, { bytesPerSecond: 100 * KIB, fullSpeedBytes: 0 });
  let ended = 0;
  pacer.write(new Uint8Array(5 * KIB));
  expect(pacer.deferred(() => ended++)).toBe(true);
  expect(ended).toBe(0);
  await Bun.sleep(120);
  expect(ended).toBe(1);
  expect(client.total).toBe(5 * KIB);
  // The end ran instead of a resume: the upstream is done.
  expect(owner.drained).toBe(0);
  expect(pacer.deferred(() => ended++)).toBe(false);
});

test("a client still behind once the held bytes are out resumes nothing: its own drain will", async () => {
  const client = new Client(2 * KIB);
  const owner = new Owner();
  const pacer = new PacedWriter(client, owner, { bytesPerSecond: 100 * KIB, fullSpeedBytes: 0 });
  pacer.write(new Uint8Array(4 * KIB));
  await Bun.sleep(100);
  expect(client.total).toBe(4 * KIB);
  expect(pacer.holding).toBe(false);
  expect(owner.drained).toBe(0);
});

test("a closed client or stop() drops what is held and stops the timer", async () => {
  const client = new Client();
  const pacer = new PacedWriter(client, new Owner(), { bytesPerSecond: 10 * KIB, fullSpeedBytes: 0 });
  pacer.write(new Uint8Array(10 * KIB));
  client.closed = true;
  await Bun.sleep(120);
  expect(pacer.holding).toBe(false);
  const before = client.got.length;
  await Bun.sleep(120);
  expect(client.got.length).toBe(before);

  const other = new Client();
  const stopped = new PacedWriter(other, new Owner(), { bytesPerSecond: 10 * KIB, fullSpeedBytes: 0 });
  stopped.write(new Uint8Array(10 * KIB));
  stopped.stop();
  // At most the byte or two the microseconds since the start allowed.
  const atStop = other.total;
  expect(atStop).toBeLessThan(16);
  await Bun.sleep(120);
  expect(other.total).toBe(atStop);
});
