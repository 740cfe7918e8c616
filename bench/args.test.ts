import { expect, test } from "bun:test";
import { parseBenchArgs, sectionNames } from "./args.ts";

test("defaults: every section, 5 rounds of 8 s", () => {
  const a = parseBenchArgs([], {});
  expect(a).toEqual({
    smoke: false,
    only: [...sectionNames],
    rounds: 5,
    seconds: 8,
    connections: 32,
    workers: [],
    floor: true,
    fields: "host",
  });
  expect(parseBenchArgs([], { BENCH_FLOOR: "0" }).floor).toBe(false);
  expect(parseBenchArgs([], { BENCH_FIELDS: "browser" }).fields).toBe("browser");
  expect(() => parseBenchArgs([], { BENCH_FIELDS: "chrome" })).toThrow(/host or browser/);
});

test("--smoke makes every section tiny, also from the environment", () => {
  expect(parseBenchArgs(["--smoke"], { BENCH_ROUNDS: "9" })).toMatchObject({
    smoke: true,
    rounds: 1,
    seconds: 1,
  });
  expect(parseBenchArgs([], { BENCH_SMOKE: "1" }).smoke).toBe(true);
});

test("--only picks sections, in both spellings", () => {
  expect(parseBenchArgs(["--only", "matcher"], {}).only).toEqual(["matcher"]);
  expect(parseBenchArgs(["--only=apply,memory", "--smoke"], {}).only).toEqual(["apply", "memory"]);
  expect(parseBenchArgs(["--only", "proxy,https"], {}).only).toEqual(["proxy", "https"]);
});

test("environment numbers and worker counts", () => {
  const a = parseBenchArgs([], { BENCH_ROUNDS: "3", BENCH_SECONDS: "2", BENCH_WORKERS: "1,2" });
  expect(a).toMatchObject({ rounds: 3, seconds: 2, workers: [1, 2] });
});

test("refuses what it does not understand, with the usage", () => {
  expect(() => parseBenchArgs(["--only", "nginx"], {})).toThrow(/unknown section "nginx"[\s\S]*usage/);
  expect(() => parseBenchArgs(["--only"], {})).toThrow(/--only needs a section/);
  expect(() => parseBenchArgs(["--fast"], {})).toThrow(/unknown argument/);
  expect(() => parseBenchArgs([], { BENCH_ROUNDS: "0" })).toThrow(/BENCH_ROUNDS/);
  expect(() => parseBenchArgs([], { BENCH_WORKERS: "1,x" })).toThrow(/BENCH_WORKERS/);
});
