import { describe, expect, test } from "bun:test";
import { LocalLimiter } from "./local.ts";

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("LocalLimiter (GCRA)", () => {
  test("a full bucket admits `burst` at once, then one per interval", () => {
    const c = clock();
    const l = new LocalLimiter({ now: c.now });
    const item = [{ key: "k", intervalMs: 100, burst: 10 }]; // 100 per 10 s
    const admitted = Array.from({ length: 15 }, () => l.checkNow(item).allowed).filter(Boolean).length;
    expect(admitted).toBe(10);
    const rejected = l.checkNow(item);
    expect(rejected.allowed).toBe(false);
    expect(rejected.items[0]).toEqual({ remaining: 0, resetMs: 1000, retryAfterMs: 100 });
    c.advance(99);
    expect(l.checkNow(item).allowed).toBe(false);
    c.advance(1);
    expect(l.checkNow(item).allowed).toBe(true);
    expect(l.checkNow(item).allowed).toBe(false);
  });

  test("remaining and reset count down as requests are admitted", () => {
    const c = clock();
    const l = new LocalLimiter({ now: c.now });
    const item = [{ key: "k", intervalMs: 1000, burst: 3 }];
    expect(l.checkNow(item).items[0]).toEqual({ remaining: 2, resetMs: 1000, retryAfterMs: 0 });
    expect(l.checkNow(item).items[0]).toEqual({ remaining: 1, resetMs: 2000, retryAfterMs: 0 });
    expect(l.checkNow(item).items[0]).toEqual({ remaining: 0, resetMs: 3000, retryAfterMs: 0 });
  });

  test("rejected requests are counted by no bucket, not even the ones that admitted them", () => {
    const c = clock();
    const l = new LocalLimiter({ now: c.now });
    const tight = { key: "tight", intervalMs: 1000, burst: 1 };
    const loose = { key: "loose", intervalMs: 1000, burst: 5 };
    expect(l.checkNow([tight, loose]).allowed).toBe(true);
    for (let i = 0; i < 10; i++) {
      const r = l.checkNow([tight, loose]);
      expect(r.allowed).toBe(false);
      expect(r.items[1]?.remaining).toBe(4); // the loose bucket did not count the rejected requests
    }
    expect(l.checkNow([loose]).items[0]?.remaining).toBe(3);
  });

  test("memory is bounded: idle buckets are dropped when full", () => {
    const c = clock();
    const l = new LocalLimiter({ now: c.now, maxBuckets: 100 });
    for (let i = 0; i < 100; i++) l.checkNow([{ key: `k${i}`, intervalMs: 10, burst: 1 }]);
    c.advance(20);
    l.checkNow([{ key: "new", intervalMs: 10, burst: 1 }]);
    expect(l.size()).toBe(1);
  });
});
