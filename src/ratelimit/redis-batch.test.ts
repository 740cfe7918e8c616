import { describe, expect, test } from "bun:test";
import { batchArgs, groupChecks, hashTag, maxBatch, type PendingCheck, splitReply } from "./redis-batch.ts";

function check(...keys: string[]): PendingCheck {
  return {
    items: keys.map((key) => ({ key, intervalMs: 100, burst: 5 })),
    lease: undefined,
    ask: 0,
    resolve: () => {},
    reject: () => {},
  };
}

describe("batches", () => {
  test("hash tags as Redis Cluster reads them", () => {
    expect(hashTag("gatehouse:rl:{b|ip=1.2.3.4}:default")).toBe("b|ip=1.2.3.4");
    expect(hashTag("no-tag")).toBe("no-tag");
    expect(hashTag("empty{}tag")).toBe("empty{}tag");
  });

  test("standalone: everything in asking order, at most maxBatch a call", () => {
    const queue = Array.from({ length: maxBatch + 3 }, (_, i) => check(`{t${i % 2}}:k`));
    const groups = groupChecks(queue, false);
    expect(groups.map((g) => g.length)).toEqual([maxBatch, 3]);
    expect(groups.flat()).toEqual(queue);
  });

  test("cluster: one hash tag per call, asking order kept within a tag", () => {
    const [a1, b1, a2] = [check("{a}:x"), check("{b}:x"), check("{a}:y")];
    const groups = groupChecks([a1, b1, a2], true);
    expect(groups).toEqual([[a1, a2], [b1]]);
  });

  test("KEYS then ARGV: checks, lease share and minimum, then per check its keys' intervals and bursts", () => {
    const leased = { ...check("{a}:x"), lease: "{a}:x", ask: 256 };
    const { numKeys, args } = batchArgs([leased, check("{b}:x", "{b}:y")], 8);
    expect(numKeys).toBe(3);
    expect(args).toEqual(["{a}:x", "{b}:x", "{b}:y", 2, 8, 16, 1, 256, 100, 5, 2, 0, 100, 5, 100, 5]);
  });

  test("a reply of the wrong shape is an unavailable store, never a verdict", () => {
    expect(() => splitReply([1, 0], [check("k")])).toThrow(/unexpected reply/);
    expect(() => splitReply("OK", [check("k")])).toThrow(/unexpected reply/);
  });

  test("a refused request's admitting buckets did not count it; a lease comes only with an admission", () => {
    const [answer] = splitReply([0, 7, 3, 200, 0, 0, 400, 100], [check("a", "b")]);
    expect(answer?.result.allowed).toBe(false);
    expect(answer?.leased).toBe(0);
    expect(answer?.result.items[0]).toEqual({ remaining: 4, resetMs: 100, retryAfterMs: 0 });
    expect(answer?.result.items[1]).toEqual({ remaining: 0, resetMs: 400, retryAfterMs: 100 });
  });
});
