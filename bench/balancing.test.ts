import { expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readFolder } from "../src/sources/file/index.ts";
import { translate } from "../src/translate/translate.ts";
import { balancingManifests, balancingRows } from "./balancing.ts";

test("every balancing row's route translates as the row says, with no problem", async () => {
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-bench-lb-"));
  try {
    await writeFile(join(dir, "lb.yaml"), balancingManifests(18080));
    const { load } = await readFolder(dir);
    expect(load.errors ?? []).toEqual([]);
    const { model, problems } = translate(load.snapshot, { httpPort: 8080, nowMs: 0 });
    expect(problems.filter((p) => p.severity !== "info").map((p) => p.message)).toEqual([]);
    const backend = (service: string) => model.backends[`bench-lb/${service}:80`];
    for (const row of balancingRows) expect(backend(row.service)?.endpoints.length).toBe(3);
    expect(backend("least")?.loadBalancer?.algorithm).toBe("LeastRequest");
    expect(backend("hheader")?.loadBalancer?.algorithm).toBe("ConsistentHash");
    expect(backend("active")?.healthCheck?.active).toBeDefined();
    expect(backend("passive")?.healthCheck?.passive).toBeDefined();
    expect(backend("cb")?.circuitBreaker?.maxConnections).toBe(10_000);
    expect(backend("reuse")?.circuitBreaker?.maxRequestsPerConnection).toBe(100);
    const routes = model.listeners.flatMap((l) => l.virtualHosts.flatMap((v) => v.routes));
    const named = (service: string) =>
      routes.find((r) => JSON.stringify(r).includes(`bench-lb/${service}:80`));
    expect(JSON.stringify(named("ewma")?.action)).toContain("EWMA");
    expect(JSON.stringify(named("sticky")?.action)).toContain("route");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
