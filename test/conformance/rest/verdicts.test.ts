import { describe, expect, test } from "bun:test";
import type { RestCase, RestTest } from "./data.ts";
import { verdictOf } from "./verdicts.ts";
import { weightedRounds } from "./weighted.ts";

const test0 = { name: "TCPRouteX", group: "TCPRoute", level: "core", features: [] } as unknown as RestTest;
const listed = { test: "TCPRouteX", issue: 27, reason: "TCP listeners are refused" };
const ok = { name: "status A", detail: "" };
const bad = { name: "case B", detail: "connection refused" };

describe("verdictOf: the expected-failures list names tests", () => {
  test("unlisted and all passing: pass", () => {
    expect(verdictOf(test0, "raw", [ok], undefined).verdict.outcome).toBe("pass");
  });

  test("unlisted with a failing item: fail, and that item FAIL", () => {
    const { verdict, results } = verdictOf(test0, "raw", [ok, bad], undefined);
    expect(verdict.outcome).toBe("fail");
    expect(results.map((r) => r.outcome)).toEqual(["pass", "fail"]);
  });

  test("listed with a failing item: xfail with its issue; passing items stay PASS", () => {
    const { verdict, results } = verdictOf(test0, "bun", [ok, bad], listed);
    expect(verdict).toMatchObject({ outcome: "xfail", issue: 27, group: "TCPRoute", front: "bun" });
    expect(results.map((r) => r.outcome)).toEqual(["pass", "xfail"]);
    expect(results[1]?.detail).toStartWith("issue 27: TCP listeners are refused — connection refused");
  });

  test("listed and nothing fails: xpass, one result that fails the run", () => {
    const { verdict, results } = verdictOf(test0, "raw", [ok], listed);
    expect(verdict.outcome).toBe("xpass");
    expect(results.filter((r) => r.outcome === "xpass")).toHaveLength(1);
  });

  test("skipped: skip with its reason; skipped yet listed is an xpass (the entry is stale)", () => {
    const skipped = [{ name: "(test)", detail: "skipped: upstream skips it", skip: true }];
    expect(verdictOf(test0, "raw", skipped, undefined).verdict).toMatchObject({
      outcome: "skip",
      detail: "skipped: upstream skips it",
    });
    expect(verdictOf(test0, "raw", skipped, listed).verdict.outcome).toBe("xpass");
  });
});

describe("weightedRounds", () => {
  const c = {
    kind: "tcpWeightedDistribution",
    distribution: {
      totalRequests: 100,
      concurrency: 5,
      maxAttempts: 2,
      tolerance: 0.05,
      expectedWeights: { a: 0.7, b: 0.3, c: 0 },
    },
  } as unknown as RestCase;
  const split = (share: number) => {
    let i = 0;
    return async () => (i++ % 100 < share ? "a" : "b");
  };

  test("shares within tolerance pass", async () => {
    expect(await weightedRounds(c, split(70))).toBe("");
  });

  test("a skewed share fails after every round", async () => {
    expect(await weightedRounds(c, split(50))).toBe(
      "a got 50.0%, want 70%; b got 50.0%, want 30% (after 2 rounds)",
    );
  });

  test("a zero-weight backend answering fails; so do sample errors", async () => {
    expect(await weightedRounds(c, async () => "c")).toContain("unexpected backends c");
    const failing = async (): Promise<string> => {
      throw new Error("refused");
    };
    expect(await weightedRounds(c, failing)).toContain("100 of 100 samples failed, e.g. refused");
  });
});
