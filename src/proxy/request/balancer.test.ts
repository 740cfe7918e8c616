import { expect, test } from "bun:test";
import { weightedPicker } from "./balancer.ts";

function counts(pick: () => string | undefined, n: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const v = String(pick());
    out[v] = (out[v] ?? 0) + 1;
  }
  return out;
}

test("weights are honoured exactly over a cycle, weight 0 never picked", () => {
  const pick = weightedPicker([
    { weight: 1, value: "a" },
    { weight: 3, value: "b" },
    { weight: 0, value: "never" },
  ]);
  expect(counts(pick, 400)).toEqual({ a: 100, b: 300 });
});

test("smooth: a heavy backend does not take a whole burst", () => {
  const pick = weightedPicker([
    { weight: 5, value: "a" },
    { weight: 1, value: "b" },
  ]);
  const seq = Array.from({ length: 6 }, pick).join("");
  expect(seq).not.toBe("aaaaab");
  expect(seq.split("").filter((c) => c === "a").length).toBe(5);
});

test("no positive weight: nothing is picked", () => {
  expect(weightedPicker([{ weight: 0, value: "a" }])()).toBeUndefined();
  expect(weightedPicker([])()).toBeUndefined();
});
