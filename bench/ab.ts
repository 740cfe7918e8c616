/**
 * `bun run bench/ab.ts [--ref REF] [--pairs N] [--seconds S] [--workers N] [--connections C]
 * [--mode together|alternate] [--headers host|browser] [--alloc]`: is the
 * working tree cheaper per request than REF (default HEAD)? A whole `bun run bench` cannot resolve a
 * 10 % change on a shared 2-core machine (neighbours move req/s by a third within minutes); this can.
 * REF is checked out into a temporary worktree; both gateways serve the proxy section's 1,000 routes
 * from one backend and are loaded at the same time by two wrk processes (or, `--mode alternate`, one
 * after the other in alternating order), so drift hits both alike. Per pair: CPU µs per request of each
 * gateway (its own processes, /proc) and req/s. The verdict is the median of the per-pair differences
 * and a sign test over the pairs. `--alloc` also reports each gateway's garbage collections per request
 * and their pauses, from the collector's log (bench/gc-log.ts).
 * Method: docs/performance.md, "Comparing two trees".
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { freePort } from "../test/helpers/ports.ts";
import { collections } from "./gc-log.ts";
import { measuredRun, Processes, repo, type Target, targetPids } from "./procs.ts";
import { BROWSER_FIELDS, manifests, routeSet, wrkScript } from "./routes.ts";
import { median, signTest } from "./stats.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    ref: { type: "string", default: "HEAD" },
    pairs: { type: "string", default: "12" },
    seconds: { type: "string", default: "2" },
    workers: { type: "string", default: "1" },
    connections: { type: "string", default: "32" },
    mode: { type: "string", default: "together" },
    headers: { type: "string", default: "host" },
    alloc: { type: "boolean", default: false },
  },
});
if (values.headers !== "host" && values.headers !== "browser") {
  console.error("ab: --headers is host (Host only, as the proxy section) or browser (a browser's fields)");
  process.exit(2);
}
const together = values.mode === "together";
if (!together && values.mode !== "alternate") {
  console.error("ab: --mode is together (both loaded at once, the default) or alternate");
  process.exit(2);
}
const pairs = Number(values.pairs);
const seconds = Number(values.seconds);
const workers = Number(values.workers);
const connections = Number(values.connections);
if (![pairs, seconds, workers, connections].every((n) => Number.isInteger(n) && n > 0)) {
  console.error("ab: --pairs, --seconds, --workers and --connections take positive integers");
  process.exit(2);
}

interface Sample {
  cpuUs: number;
  rps: number;
  requests: number;
}

async function measure(t: Target, script: string): Promise<Sample> {
  const run = await measuredRun(t.name, await targetPids(t), {
    url: t.url,
    script,
    seconds,
    connections,
    threads: 1,
  });
  return { cpuUs: run.cpuUsPerRequest ?? Number.NaN, rps: run.rps, requests: run.requests };
}

/**
 * One pair. `together`: both gateways loaded at once by two wrk processes, so whatever the neighbours
 * do to the machine in those seconds they do to both (the default: measured here, an A/A run's pairs
 * scatter several times less than with consecutive runs). `alternate`: one after the other, the order
 * swapped every pair (each gateway then has the cores to itself, as in the proxy section).
 */
async function pair(i: number, a: Target, b: Target, script: string): Promise<[Sample, Sample]> {
  if (together) return Promise.all([measure(a, script), measure(b, script)]);
  const first = i % 2 === 0 ? a : b;
  const s1 = await measure(first, script);
  const s2 = await measure(first === a ? b : a, script);
  return first === a ? [s1, s2] : [s2, s1];
}

const work = await mkdtemp(join(tmpdir(), "gatehouse-ab-"));
const procs = new Processes();
const baseTree = join(work, "base");
let worktree = false;
const stop = () => {
  void procs.stopAll().finally(() => process.exit(130));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
try {
  await Bun.$`git -C ${repo} worktree add --detach ${baseTree} ${values.ref}`.quiet();
  worktree = true;
  await symlink(join(repo, "node_modules"), join(baseTree, "node_modules"));
  const rev = (await Bun.$`git -C ${baseTree} rev-parse --short HEAD`.text()).trim();
  const set = routeSet(100, 10);
  const script = join(work, "routes.lua");
  await writeFile(script, wrkScript(set, values.headers === "browser" ? BROWSER_FIELDS : {}));
  const backendPort = await procs.backend();
  const start = async (name: string, root: string): Promise<Target> => {
    const port = await freePort();
    const dir = join(work, name);
    await mkdir(dir);
    await writeFile(join(dir, "routes.yaml"), manifests(set, backendPort, port));
    return procs.gatehouse({
      dir,
      port,
      workers,
      root,
      name,
      ready: { probe: "/p0/x", host: set.hosts[1] as string },
      ...(values.alloc ? { env: { BUN_JSC_logGC: "1" }, stderrFile: gcLog(name) } : {}),
    });
  };
  const gcLog = (name: string) => join(work, `${name.replace(/\W/g, "_")}.gc.log`);
  const gcNow = async (t: Target) => collections(await Bun.file(gcLog(t.name)).text());
  const a = await start(`A(${rev})`, baseTree);
  const b = await start("B(tree)", repo);
  // Warm both up (JIT tiers, pools) before anything counts.
  await pair(0, a, b, script);
  await pair(1, a, b, script);
  const gcFrom = values.alloc ? [(await gcNow(a)).length, (await gcNow(b)).length] : [0, 0];
  console.log(
    `A = ${values.ref} (${rev}), B = working tree; ${pairs} pairs of ${seconds} s (${values.mode}), wrk -t1 -c${connections}, --workers ${workers}, ${values.headers} fields`,
  );
  console.log("pair  A µs/req  B µs/req   B−A   A req/s  B req/s");
  const diffs: number[] = [];
  const as: Sample[] = [];
  const bs: Sample[] = [];
  for (let i = 0; i < pairs; i++) {
    const [sa, sb] = await pair(i, a, b, script);
    as.push(sa);
    bs.push(sb);
    diffs.push(sb.cpuUs - sa.cpuUs);
    console.log(
      `${String(i + 1).padStart(4)}  ${sa.cpuUs.toFixed(1).padStart(8)}  ${sb.cpuUs.toFixed(1).padStart(8)}  ${(sb.cpuUs - sa.cpuUs).toFixed(1).padStart(5)}  ${sa.rps.toFixed(0).padStart(7)}  ${sb.rps.toFixed(0).padStart(7)}`,
    );
  }
  const lower = diffs.filter((d) => d < 0).length;
  const ma = median(as.map((s) => s.cpuUs));
  const mb = median(bs.map((s) => s.cpuUs));
  console.log(
    `median CPU µs/req: A ${ma.toFixed(1)}, B ${mb.toFixed(1)}; median B−A ${median(diffs).toFixed(2)} µs; B lower in ${lower} of ${pairs} pairs (sign test p = ${signTest(lower, pairs).toFixed(3)})`,
  );
  console.log(
    `median req/s: A ${median(as.map((s) => s.rps)).toFixed(0)}, B ${median(bs.map((s) => s.rps)).toFixed(0)}`,
  );
  if (values.alloc) {
    // From the collector's own log (bench/gc-log.ts): how often each gateway stopped to collect, the
    // pauses that set its p99. The count follows allocation but also the heap sizes JavaScriptCore
    // picks for each process, so it is a figure to watch, not a measure of bytes.
    const line = async (label: string, t: Target, from: number, samples: Sample[]) => {
      const all = (await gcNow(t)).slice(from);
      const requests = samples.reduce((n, s) => n + s.requests, 0);
      const pauses = all.map((c) => c.pauseMs);
      return `${label} ${((all.length * 100_000) / requests).toFixed(1)} collections per 100k requests, median pause ${median(pauses).toFixed(2)} ms`;
    };
    console.log(
      `GC: ${await line("A", a, gcFrom[0] as number, as)}; ${await line("B", b, gcFrom[1] as number, bs)}`,
    );
  }
} finally {
  await procs.stopAll();
  if (worktree) await Bun.$`git -C ${repo} worktree remove --force ${baseTree}`.quiet().nothrow();
  await rm(work, { recursive: true, force: true });
}
