/**
 * Config-change section, at 10k routes (bench/workload.ts), twice:
 * - in process: the serving pipeline of `gatehouse serve` (translate → compile → swap into a live
 *   listener, `GatewayServer.apply`) timed step by step for a one-object change, plus the folder re-read
 *   that precedes it (`readFolder` with the source's parse cache: only the changed file is parsed);
 * - end to end: a `gatehouse serve` process on a folder; write the changed file, poll until the new
 *   route answers. The folder source waits for a quiet period (`--debounce-ms`) before reading, so that
 *   wait is reported and subtracted.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { setLogLevel } from "../src/observability/logger.ts";
import { compile } from "../src/proxy/compile.ts";
import { GatewayServer } from "../src/proxy/listeners/server.ts";
import { readFolder } from "../src/sources/file/index.ts";
import type { ParseCache } from "../src/sources/file/load.ts";
import { translate } from "../src/translate/translate.ts";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { median, spread } from "./stats.ts";
import { workload, yamlFiles } from "./workload.ts";

const debounceMs = 100;

/** One more Ingress with one route: the change applied each round. */
function changeFile(round: number): string {
  return stringify({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: "changed", namespace: "bench" },
    spec: {
      ingressClassName: "gatehouse",
      rules: [
        {
          host: `changed-${round}.example.com`,
          http: {
            paths: [
              { path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } },
            ],
          },
        },
      ],
    },
  });
}

async function answers(port: number, host: string): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host } });
    return (await res.text()).startsWith("ok");
  } catch {
    return false;
  }
}

async function writeWorkload(dir: string, routes: number, httpPort: number, upstreamPort: number) {
  await mkdir(dir, { recursive: true });
  const w = workload(routes, httpPort, upstreamPort);
  const files = yamlFiles(w.objects);
  await Promise.all(
    files.map((f, i) => writeFile(join(dir, `routes-${String(i).padStart(3, "0")}.yaml`), f)),
  );
  await writeFile(join(dir, "zz-changed.yaml"), changeFile(0));
  return { files: files.length + 1, routes: w.routes };
}

export async function applySection(ctx: BenchContext): Promise<string> {
  const routes = ctx.settings.smoke ? 200 : 10_000;
  const rounds = ctx.settings.smoke ? 1 : Math.max(5, ctx.settings.rounds);
  setLogLevel("error"); // the in-process server would log each listener open/close
  const out: string[] = [];

  // In process.
  const port = await freePort();
  const dir = join(ctx.work, "apply-inproc");
  const layout = await writeWorkload(dir, routes, port, ctx.backendPort);
  const opts = { httpPort: port, nowMs: Date.now() };
  // The folder source keeps each file's parse while its text is unchanged; so does this loop.
  const parsed: ParseCache = new Map();
  let { memory, load } = await readFolder(dir, new Map(), parsed);
  const server = new GatewayServer({ bind: "127.0.0.1" });
  const steps = {
    read: [] as number[],
    translate: [] as number[],
    compile: [] as number[],
    apply: [] as number[],
  };
  let first = 0;
  try {
    const t0 = performance.now();
    await server.apply(translate(load.snapshot, opts).model);
    first = performance.now() - t0;
    for (let r = 1; r <= rounds; r++) {
      await writeFile(join(dir, "zz-changed.yaml"), changeFile(r));
      const a = performance.now();
      ({ memory, load } = await readFolder(dir, memory, parsed));
      const b = performance.now();
      const { model } = translate(load.snapshot, opts);
      const c = performance.now();
      compile(model); // timed alone for the breakdown; apply() compiles again, as serving does
      const d = performance.now();
      await server.apply(model);
      const e = performance.now();
      if (!(await answers(port, `changed-${r}.example.com`)))
        throw new Error(`apply: changed-${r}.example.com does not answer after apply`);
      steps.read.push(b - a);
      steps.translate.push(c - b);
      steps.compile.push(d - c);
      steps.apply.push(e - d);
    }
  } finally {
    await server.stop();
  }
  const pipeline = steps.translate.map((t, i) => t + (steps.apply[i] as number));
  out.push(
    `${layout.routes} routes in ${layout.files} files; change = one Ingress file rewritten; ${rounds} round(s)`,
    "in process (ms, median [min–max]):",
    `  first apply (translate+compile+listen)  ${first.toFixed(0)}`,
    `  folder re-read (changed file parsed)   ${median(steps.read).toFixed(1)} [${spread(steps.read, 1)}]`,
    `  translate                               ${median(steps.translate).toFixed(1)} [${spread(steps.translate, 1)}]`,
    `  compile (inside apply)                  ${median(steps.compile).toFixed(1)} [${spread(steps.compile, 1)}]`,
    `  apply = compile + swap                  ${median(steps.apply).toFixed(1)} [${spread(steps.apply, 1)}]`,
    `  translate + apply                       ${median(pipeline).toFixed(1)} [${spread(pipeline, 1)}]   (goal < 100)`,
  );

  // End to end through a gateway process.
  const gwPort = await freePort();
  const gwDir = join(ctx.work, "apply-e2e");
  await writeWorkload(gwDir, routes, gwPort, ctx.backendPort);
  const gw = await ctx.procs.gatehouse({
    dir: gwDir,
    port: gwPort,
    workers: 1,
    ready: { probe: "/", host: "changed-0.example.com" },
    extra: ["--debounce-ms", String(debounceMs)],
  });
  const e2e: number[] = [];
  try {
    for (let r = 1; r <= rounds; r++) {
      await Bun.sleep(ctx.settings.smoke ? 50 : 300); // let the previous reload settle
      const host = `changed-${r}.example.com`;
      const started = performance.now();
      await writeFile(join(gwDir, "zz-changed.yaml"), changeFile(r));
      while (!(await answers(gwPort, host))) {
        if (performance.now() - started > 30_000) throw new Error(`apply: ${host} never answered`);
        await Bun.sleep(1);
      }
      e2e.push(performance.now() - started);
    }
  } finally {
    await gw.stop();
  }
  const net = e2e.map((x) => x - debounceMs);
  out.push(
    `end to end (gatehouse serve --workers 1 --debounce-ms ${debounceMs}; write the file → the new host answers; ms):`,
    `  measured                                ${median(e2e).toFixed(0)} [${spread(e2e)}]`,
    `  minus the ${debounceMs} ms debounce                ${median(net).toFixed(0)} [${spread(net)}]   (goal < 100)`,
  );
  return out.join("\n");
}
