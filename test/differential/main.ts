/**
 * `bun run test/differential/main.ts [--all] [--detail] [--only TEXT]`: the probe table against
 * Gatehouse's two fronts and a real nginx, printing a row per probe where they differ (`--all`: every
 * probe; `--detail`: what each target answered and which backend got which request line) and a count
 * per verdict. Exits 1 when a dangerous difference is not in known-differences.ts, or an entry there no longer
 * happens. Needs nginx on PATH.
 */
import { PROBES } from "./probes.ts";
import { findings, render, unexplained } from "./report.ts";
import { runProbes } from "./run.ts";
import { startTargets } from "./targets.ts";

const argv = Bun.argv.slice(2);
const all = argv.includes("--all");
const detail = argv.includes("--detail");
const only = argv.includes("--only") ? argv[argv.indexOf("--only") + 1] : undefined;
const probes = only === undefined ? PROBES : PROBES.filter((p) => p.name.includes(only));

const targets = await startTargets();
// nginx outlives a run stopped with Ctrl-C unless it is stopped here.
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => void targets.stop().finally(() => process.exit(130)));
let failed = false;
try {
  const results = await runProbes(targets, probes);
  console.log(render(results, { all, detail }));
  const { dangerous, stale } = unexplained(findings(results));
  failed = dangerous.length > 0 || stale.length > 0;
} finally {
  await targets.stop();
}
process.exit(failed ? 1 : 0);
