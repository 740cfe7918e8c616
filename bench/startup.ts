/**
 * Startup section: time from spawn to the first routed answer of `gatehouse serve --workers 1` on a folder
 * of 10k routes (1000 hosts × 10 prefixes, Ingress and HTTPRoute mixed), three ways in alternating
 * rounds: from source (`bun src/main.ts`), the compiled executable as `bun run build` makes it (bytecode),
 * and the same without bytecode. The executables are built first (scripts/build.ts, this machine's
 * target). Readiness is polled every 50 ms (Processes.ready), so figures are ± 25 ms.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { repo } from "./procs.ts";
import { manifests, routeSet } from "./routes.ts";
import { median, spread } from "./stats.ts";

async function buildExecutable(outdir: string, bytecode: boolean): Promise<string> {
  const args = ["bun", join(repo, "scripts/build.ts"), "--target", "native", "--outdir", outdir];
  const p = Bun.spawn(bytecode ? args : [...args, "--without-bytecode"], {
    stdout: "ignore",
    stderr: "pipe",
  });
  if ((await p.exited) !== 0)
    throw new Error(`startup: build failed: ${await new Response(p.stderr).text()}`);
  return join(outdir, "gatehouse");
}

export async function startupSection(ctx: BenchContext): Promise<string> {
  const set = ctx.settings.smoke ? routeSet(20, 10) : routeSet(1000, 10);
  const dir = join(ctx.work, "startup");
  await mkdir(dir, { recursive: true });
  const targets: { name: string; command: readonly string[]; ms: number[] }[] = [
    { name: "source", command: ["bun", join(repo, "src/main.ts")], ms: [] },
    { name: "executable", command: [await buildExecutable(join(dir, "bytecode"), true)], ms: [] },
  ];
  if (!ctx.settings.smoke)
    targets.push({
      name: "exe, no bytecode",
      command: [await buildExecutable(join(dir, "plain"), false)],
      ms: [],
    });
  const rounds = ctx.settings.smoke ? 1 : ctx.settings.rounds;
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) {
      const port = await freePort();
      const gwDir = join(dir, `${t.name.replace(/\W+/g, "-")}-${round}`);
      await mkdir(gwDir, { recursive: true });
      await writeFile(join(gwDir, "routes.yaml"), manifests(set, ctx.backendPort, port));
      const started = performance.now();
      const gw = await ctx.procs.gatehouse({
        dir: gwDir,
        port,
        workers: 1,
        command: t.command,
        ready: { probe: "/p9/x", host: set.hosts.at(-1) as string },
      });
      t.ms.push(performance.now() - started);
      await gw.stop();
    }
  }
  const routes = set.hosts.length * set.paths.length;
  const source = median(targets[0]?.ms ?? []);
  return [
    `${routes} routes, --workers 1: spawn → first routed 200 (last host's last path), median of ${rounds} alternating rounds`,
    "target              ready (ms)   spread (ms)   × source",
    ...targets.map((t) => {
      const m = median(t.ms);
      return `${t.name.padEnd(18)} ${m.toFixed(0).padStart(11)}   ${spread(t.ms).padStart(11)}   ${(m / source).toFixed(2).padStart(8)}`;
    }),
  ].join("\n");
}
