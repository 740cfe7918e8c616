/**
 * The standing probe suite (issue 21) against a real nginx: every probe in test/differential/probes.ts
 * goes byte for byte to the raw front, the Bun.serve front and nginx with the same routes, and no probe
 * may reach another backend, path, body or field set on a front than on nginx, nor on one front than on
 * the other, unless test/differential/known-differences.ts says why. Stricter or laxer refusals are
 * reported (`bun run test/differential/main.ts`) but do not fail. Needs nginx on PATH: skipped without
 * it, except in CI, which installs it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PROBES } from "../../differential/probes.ts";
import { findings, render, unexplained } from "../../differential/report.ts";
import { type ProbeResult, runProbes } from "../../differential/run.ts";
import { nginxBinary, startTargets, type Targets } from "../../differential/targets.ts";

const run = nginxBinary() !== null || process.env.CI !== undefined;

let targets: Targets | undefined;
let results: ProbeResult[] = [];

beforeAll(async () => {
  if (!run) return;
  targets = await startTargets();
  results = await runProbes(targets);
}, 25_000);

afterAll(() => targets?.stop());

const routedOf = (probe: string) => {
  const r = results.find((x) => x.probe.name === probe);
  return [r?.outcomes.raw.routed, r?.outcomes.bun.routed, r?.outcomes.nginx.routed];
};

test.skipIf(!run)(
  "the harness sees routing: a plain request and a dot segment reach their backends on all three",
  () => {
    // Known differences name probes: two probes with one name would share an entry.
    expect(new Set(PROBES.map((p) => p.name)).size).toBe(PROBES.length);
    expect(routedOf("baseline GET")).toEqual(Array(3).fill(["public GET /public/x"]));
    expect(routedOf("dot segments")).toEqual(Array(3).fill(["admin GET /admin"]));
    expect(routedOf("two pipelined requests, different Hosts")[2]).toEqual([
      "public GET /public/a",
      "catch-all",
    ]);
  },
);

test.skipIf(!run)("no probe is routed differently on a front than on nginx, unless known", () => {
  const all = findings(results);
  const { dangerous, stale } = unexplained(all);
  const vsNginx = dangerous.filter((f) => f.pair.endsWith("-nginx")).map((f) => `${f.probe} (${f.pair})`);
  if (vsNginx.length > 0 || stale.length > 0) console.log(render(results));
  expect(vsNginx).toEqual([]);
  expect(stale).toEqual([]);
});

test.skipIf(!run)("the raw and bun fronts never route the same bytes differently, unless known", () => {
  const fronts = unexplained(findings(results))
    .dangerous.filter((f) => f.pair === "raw-bun")
    .map((f) => f.probe);
  expect(fronts).toEqual([]);
});
