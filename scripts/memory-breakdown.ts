/**
 * Where a gateway's memory goes at 10k routes (docs/performance.md, "Memory at 10k routes"), on the
 * memory bench's route set (bench/routes.ts: 1000 hosts × 10 prefixes, Ingresses and HTTPRoutes):
 *
 * 1. the serving pipeline run step by step in this process, each step's result kept, then dropped
 *    again, with the JS heap (after full collections) and RSS after each step;
 * 2. in a fresh process (`--serve`), the folder served by `startGateway` as `gatehouse serve` does, and
 *    then CONNECTIONS idle keep-alive connections opened by a child process (`--client`): heap and RSS
 *    per connection.
 *
 *   bun scripts/memory-breakdown.ts [HOSTS] [PATHS_PER_HOST] [--connections N] [--types]
 *
 * `--types` lists the object types that changed most at each step (bun:jsc heapStats().objectTypeCounts).
 * Run it with MIMALLOC_PURGE_DELAY=-1 to see RSS as the image (and the bench) runs the gateway.
 */
import { heapStats } from "bun:jsc";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args.splice(i, 2)[1];
};
const types = args.includes("--types");
const serveDir = flag("--serve");
const clientPort = flag("--client");
const connections = Number(flag("--connections") ?? 10_000);
const [hosts = 1000, paths = 10] = args.filter((a) => !a.startsWith("--")).map(Number);

function rssMb(): number {
  const status = require("node:fs").readFileSync("/proc/self/status", "utf8") as string;
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
}

interface Sample {
  readonly step: string;
  readonly heapMb: number;
  readonly objects: number;
  readonly rssMb: number;
  readonly counts: Record<string, number>;
}

const samples: Sample[] = [];
function sample(step: string): Sample {
  Bun.gc(true);
  Bun.gc(true);
  const h = heapStats();
  const s = {
    step,
    heapMb: h.heapSize / 2 ** 20,
    objects: h.objectCount,
    rssMb: rssMb(),
    counts: { ...h.objectTypeCounts },
  };
  samples.push(s);
  return s;
}

function report(): string {
  const lines = [
    "step                                      heap MB (Δ)       objects (Δ)         RSS MB (Δ)",
  ];
  samples.forEach((s, i) => {
    const p = samples[i - 1] ?? s;
    const d = (a: number, b: number, digits: number) => `${a - b >= 0 ? "+" : ""}${(a - b).toFixed(digits)}`;
    lines.push(
      `${s.step.padEnd(41)} ${s.heapMb.toFixed(1).padStart(5)} (${d(s.heapMb, p.heapMb, 1).padStart(5)})  ${String(s.objects).padStart(7)} (${d(s.objects, p.objects, 0).padStart(7)})  ${s.rssMb.toFixed(1).padStart(6)} (${d(s.rssMb, p.rssMb, 1).padStart(6)})`,
    );
    if (types && i > 0) {
      const grown = Object.entries(s.counts)
        .map(([t, n]) => [t, n - (p.counts[t] ?? 0)] as const)
        .filter(([, n]) => Math.abs(n) >= 1000)
        .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
        .slice(0, 8);
      if (grown.length > 0)
        lines.push(`    ${grown.map(([t, n]) => `${t} ${n > 0 ? "+" : ""}${n}`).join(", ")}`);
    }
  });
  return lines.join("\n");
}

const request = (host: string) =>
  `GET /p0/x HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: gatehouse-bench\r\n\r\n`;

if (clientPort !== undefined) {
  // The client half of `--serve`: open the connections, say so, hold them until told.
  const { openIdle } = await import("../bench/idle-connections.ts");
  const sockets = [];
  for (let i = 0; i < connections; i += 200) {
    const n = Math.min(200, connections - i);
    const opened = Array.from({ length: n }, () =>
      openIdle(Number(clientPort), request("host-0.bench.test")),
    );
    sockets.push(...(await Promise.all(opened)));
  }
  process.send?.("open");
  process.on("message", () => {
    for (const s of sockets) s.end();
    process.exit(0);
  });
} else if (serveDir !== undefined) {
  sample("runtime (bun, nothing imported)");
  const { setLogLevel } = await import("../src/observability/logger.ts");
  const { startGateway } = await import("../src/cli/serve.ts");
  const { parseServeConfig } = await import("../src/config/config.ts");
  const { freePort } = await import("../test/helpers/ports.ts");
  setLogLevel("error");
  sample("gatehouse modules imported");
  const port = await freePort();
  const gw = await startGateway(
    parseServeConfig(
      ["--dir", serveDir, "--bind", "127.0.0.1", "--http-port", String(port), "--admin-port", "0"],
      {},
    ),
  );
  await Bun.sleep(500);
  const served = sample("startGateway: the folder served");
  const client = Bun.spawn(
    ["bun", import.meta.path, "--client", String(port), "--connections", String(connections)],
    { stdio: ["ignore", "inherit", "inherit"], ipc: () => opened.resolve() },
  );
  const opened = Promise.withResolvers<void>();
  await Promise.race([opened.promise, client.exited]);
  if (client.exitCode !== null) throw new Error("the client could not open its connections");
  await Bun.sleep(500);
  const idle = sample(`${connections} idle keep-alive connections`);
  client.send("close");
  await client.exited;
  await gw.stop({ delayMs: 0, timeoutMs: 100 });
  console.log(report());
  const each = (a: number, b: number) => (((a - b) * 2 ** 20) / connections).toFixed(0);
  console.log(
    `per idle connection: heap ${each(idle.heapMb, served.heapMb)} B, RSS ${each(idle.rssMb, served.rssMb)} B`,
  );
} else {
  sample("runtime (bun, nothing imported)");
  const { compile } = await import("../src/proxy/compile.ts");
  const { readFolder } = await import("../src/sources/file/index.ts");
  const { translate } = await import("../src/translate/translate.ts");
  const { GatewayServer } = await import("../src/proxy/listeners/server.ts");
  const { setLogLevel } = await import("../src/observability/logger.ts");
  const { manifests, routeSet } = await import("../bench/routes.ts");
  const { freePort } = await import("../test/helpers/ports.ts");
  setLogLevel("error");
  sample("gatehouse modules imported");

  const dir = await mkdtemp(join(tmpdir(), "gatehouse-memory-"));
  const port = await freePort();
  // The bench's upstream, for the connections' one request each.
  const backendPort = await freePort();
  const backend = Bun.spawn(["bun", join(import.meta.dir, "../bench/backend.ts"), String(backendPort)], {
    stdout: "pipe",
  });
  await backend.stdout.getReader().read(); // it prints its port once listening
  await writeFile(join(dir, "routes.yaml"), manifests(routeSet(hosts, paths), backendPort, port));
  try {
    // `let`s dropped one by one: each step's own share is what goes when its result is dropped.
    let cache: import("../src/sources/file/load.ts").ParseCache | undefined = new Map();
    const read = await readFolder(dir, new Map(), cache);
    sample("readFolder (parsed objects, parse cache)");
    cache = undefined;
    sample("  parse cache dropped");
    const options = { httpPort: port, nowMs: Date.now() };
    let translated: ReturnType<typeof translate> | undefined = translate(read.load.snapshot, options);
    sample("translate (model, statuses, memos)");
    translated = undefined;
    sample("  model dropped (the memos stay)");
    translated = translate(read.load.snapshot, options);
    sample("translate again (memos reused)");
    let table: ReturnType<typeof compile> | undefined = compile(translated.model, { probes: false });
    sample("compile (route table, matcher indexes)");
    table = undefined;
    sample("  table dropped");
    const server = new GatewayServer({ bind: "127.0.0.1" });
    await server.apply(translated.model);
    sample("GatewayServer.apply (table, listeners)");
    await server.stop();
    console.log(`${hosts * paths} routes (${hosts} hosts × ${paths} prefixes), in one process:`);
    console.log(report());
    void table;
    // The served gateway, and idle connections, in a fresh process.
    const child = Bun.spawn(
      [
        "bun",
        import.meta.path,
        "--serve",
        dir,
        "--connections",
        String(connections),
        ...(types ? ["--types"] : []),
      ],
      { stdio: ["ignore", "inherit", "inherit"] },
    );
    console.log("\n`gatehouse serve` in process (startGateway), a fresh process:");
    await child.exited;
  } finally {
    backend.kill();
    await rm(dir, { recursive: true, force: true });
  }
}
