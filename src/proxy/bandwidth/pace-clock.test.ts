import { expect, test } from "bun:test";
import { PaceClock } from "./pace-clock.ts";

test("the first fullSpeedBytes are allowed at once, then bytesPerSecond", () => {
  const clock = new PaceClock({ bytesPerSecond: 1000, fullSpeedBytes: 500 });
  const t0 = performance.now();
  expect(clock.allowance(t0)).toBeGreaterThanOrEqual(500);
  expect(clock.allowance(t0)).toBeLessThan(520);
  clock.sent = 500;
  // 250 ms later: 250 more bytes (give or take the ms between the clock's start and t0).
  const later = clock.allowance(t0 + 250);
  expect(later).toBeGreaterThanOrEqual(250);
  expect(later).toBeLessThan(270);
});

test("waitMs is when the bytes are allowed, and at that instant they are", () => {
  const clock = new PaceClock({ bytesPerSecond: 64 * 1024, fullSpeedBytes: 0 });
  const now = performance.now();
  clock.sent = clock.allowance(now);
  const ms = clock.waitMs(6400, now);
  expect(ms).toBeGreaterThanOrEqual(97);
  expect(ms).toBeLessThanOrEqual(99);
  expect(clock.allowance(now + ms)).toBeGreaterThanOrEqual(6400);
});

test("a wake-up waits for a slice (1/20 s of bytes), or for fewer bytes when fewer are held", () => {
  const clock = new PaceClock({ bytesPerSecond: 20_000, fullSpeedBytes: 0 });
  expect(clock.slice).toBe(1000);
  const now = performance.now();
  clock.sent = clock.allowance(now);
  expect(clock.nextSliceMs(1_000_000, now)).toBeGreaterThanOrEqual(49);
  expect(clock.nextSliceMs(1_000_000, now)).toBeLessThanOrEqual(51);
  expect(clock.nextSliceMs(100, now)).toBeLessThanOrEqual(6);
});

test("at least 1 ms, so a timer never spins", () => {
  const clock = new PaceClock({ bytesPerSecond: 1, fullSpeedBytes: 1_000_000 });
  expect(clock.waitMs(1, performance.now())).toBe(1);
  expect(new PaceClock({ bytesPerSecond: 1, fullSpeedBytes: 0 }).slice).toBe(1);
});
