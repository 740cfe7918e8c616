import { expect, test } from "bun:test";
import { translate } from "../src/translate/translate.ts";
import { shuffled, snapshotOf, workload, yamlFiles } from "./workload.ts";

test("the workload translates to the routes it promises, without problems", () => {
  const w = workload(100);
  expect(w.routes).toBe(100);
  expect(w.requests.length).toBeGreaterThan(100);
  const { model, problems } = translate(snapshotOf(w.objects), { httpPort: 8080, nowMs: 0 });
  expect(problems.filter((p) => p.severity === "error")).toEqual([]);
  const routes = model.listeners.flatMap((l) => l.virtualHosts).reduce((n, v) => n + v.routes.length, 0);
  expect(routes).toBe(100);
});

test("yamlFiles splits the objects, shuffled is a seeded permutation", () => {
  const w = workload(100);
  expect(yamlFiles(w.objects, 5).length).toBe(Math.ceil(w.objects.length / 5));
  const xs = Array.from({ length: 50 }, (_, i) => i);
  expect(shuffled(xs, 3)).toEqual(shuffled(xs, 3));
  expect(shuffled(xs, 3)).not.toEqual(xs);
  expect([...shuffled(xs, 3)].sort((a, b) => a - b)).toEqual(xs);
});
