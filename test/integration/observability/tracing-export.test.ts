/**
 * Tracing's bad input and its wiring in `gatehouse serve`: a collector that is down or slow (spans
 * dropped and counted, requests unaffected), on both fronts; the real program exporting to a real
 * receiver; an `--otlp-endpoint` that does not parse (the start fails); and no OpenTelemetry code loaded
 * without the flag. The spans themselves: tracing.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { GatewayMetrics } from "../../../src/observability/metrics.ts";
import { MetricsAndAccessLog } from "../../../src/observability/request-observer.ts";
import { startTracing, type Tracing } from "../../../src/observability/tracing/tracing.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import {
  backend,
  forwardTo,
  listener,
  match,
  model,
  route,
  vhost,
} from "../../../src/proxy/testing/model.ts";
import { startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { defaultBackendYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gateway-process.ts";
import { type OtlpReceiver, startOtlpReceiver } from "../../helpers/otlp-receiver.ts";
import { freePort } from "../../helpers/ports.ts";

const repo = resolve(import.meta.dir, "../../..");

function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(" ") + 1));
}

const QUEUE_FULL = 'gatehouse_trace_spans_dropped_total{reason="queue_full"}';
const EXPORT_FAILED = 'gatehouse_trace_spans_dropped_total{reason="export_failed"}';
const EXPORTED = "gatehouse_trace_spans_exported_total";

forEachFront("a collector that is down or slow", (front) => {
  let app: TestUpstream;
  let held: OtlpReceiver;
  const running: { proxy: GatewayServer; tracing: Tracing }[] = [];

  beforeAll(() => {
    app = startUpstream("app");
    held = startOtlpReceiver({ hold: true });
  });

  afterEach(async () => {
    for (const r of running.splice(0)) {
      await r.proxy.stop();
      await r.tracing.spans.shutdown(500);
    }
  });

  afterAll(async () => {
    await app?.stop();
    await held?.stop();
  });

  /** A gateway tracing every request to `url`, with a small queue and a short export deadline. */
  async function gateway(url: string) {
    const metrics = new GatewayMetrics({ processMetrics: false });
    const tracing = startTracing(url, 1, metrics.registry, {
      delayMs: 20,
      timeoutMs: 400,
      maxQueueSize: 4,
      maxBatchSize: 2,
    });
    const proxy = new GatewayServer({
      bind: "127.0.0.1",
      front,
      observer: new MetricsAndAccessLog(metrics, undefined, tracing),
    });
    running.push({ proxy, tracing });
    await proxy.apply(
      model(
        [listener([vhost("app.test", [route("r/api", match("/"), forwardTo("test/app:80"))])])],
        [backend("test/app:80", [app.port])],
      ),
    );
    const base = `http://127.0.0.1:${proxy.ports()[0]?.port}`;
    /** `n` requests one after another: their statuses and how long they took in all. */
    const load = async (n: number) => {
      const started = performance.now();
      const statuses: number[] = [];
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${base}/x`, { headers: { host: "app.test" } });
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      return { statuses, ms: performance.now() - started };
    };
    /** Waits until every one of `n` spans is accounted for (exported or dropped); the counters then. */
    const settled = async (n: number) => {
      const deadline = performance.now() + 8000;
      for (;;) {
        const text = await metrics.text();
        const c = {
          queueFull: sample(text, QUEUE_FULL),
          failed: sample(text, EXPORT_FAILED),
          exported: sample(text, EXPORTED),
        };
        if (c.queueFull + c.failed + c.exported >= n || performance.now() > deadline) return c;
        await Bun.sleep(50);
      }
    };
    return { load, settled };
  }

  test("down (nothing listens): every span dropped as export_failed, every request answered", async () => {
    const g = await gateway(`http://127.0.0.1:${await freePort()}/v1/traces`);
    // Spaced out, so that the queue (4) never fills: each failure is the endpoint's.
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push(...(await g.load(2)).statuses);
      await Bun.sleep(100);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await g.settled(6)).toEqual({ queueFull: 0, failed: 6, exported: 0 });
  });

  test("slow (takes the export, never answers): requests unaffected, the queue bounded, every span counted", async () => {
    const g = await gateway(held.url);
    const before = held.requests();
    const { statuses, ms } = await g.load(30);
    expect(statuses.every((s) => s === 200)).toBe(true);
    // Waiting on the export would cost each request its 400 ms deadline: 12 s for the 30.
    expect(ms).toBeLessThan(4000);
    const c = await g.settled(30);
    expect(c.exported).toBe(0);
    expect(c.queueFull + c.failed).toBe(30);
    // At most the queue (4) and the batches that left it while the requests ran wait for the collector.
    expect(c.queueFull).toBeGreaterThanOrEqual(20);
    expect(c.failed).toBeGreaterThan(0);
    expect(held.requests()).toBeGreaterThan(before);
  }, 15_000);
});

describe("gatehouse serve with --otlp-endpoint", () => {
  let dir: string;
  let app: TestUpstream;
  let receiver: OtlpReceiver;
  let gw: GatewayProcess | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "gatehouse-tracing-"));
    app = startUpstream("app");
    receiver = startOtlpReceiver();
    await writeFile(join(dir, "app.yaml"), defaultBackendYaml("app", app.port));
  });

  afterEach(async () => {
    await gw?.kill();
    gw = undefined;
  });

  afterAll(async () => {
    await app?.stop();
    await receiver?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  for (const front of ["raw", "bun"] as const) {
    test(`--front ${front}: spans reach the collector (/v1/traces added to a bare URL), counted on /metrics, trace_id in the access log`, async () => {
      const base = receiver.url.replace("/v1/traces", "");
      const flags = ["--front", front, "--workers", "1", "--otlp-endpoint", base, "--trace-sample-rate", "1"];
      gw = await startGatewayProcess(dir, flags);
      const res = await fetch(`http://127.0.0.1:${gw.httpPort}/traced`);
      expect(res.status).toBe(200);
      const upstream = ((await res.json()) as { headers: Record<string, string> }).headers;
      const [, traceId, spanId] =
        /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(upstream.traceparent ?? "") ?? [];
      const spans = await receiver.waitFor((s) => s.traceId === traceId);
      expect(spans.map((s) => s.spanId)).toEqual([spanId as string]);
      // Counted once the collector's answer is in, a moment after it has the spans.
      const deadline = performance.now() + 3000;
      const scrape = async () => (await fetch(`http://127.0.0.1:${gw?.adminPort}/metrics`)).text();
      let metrics = await scrape();
      while (!(sample(metrics, EXPORTED) >= 1) && performance.now() < deadline) {
        await Bun.sleep(20);
        metrics = await scrape();
      }
      expect(sample(metrics, EXPORTED)).toBeGreaterThanOrEqual(1);
      expect(sample(metrics, QUEUE_FULL)).toBe(0);
      while (!gw.output().includes(`"trace_id":"${traceId}"`) && performance.now() < deadline)
        await Bun.sleep(20);
      expect(gw.output()).toContain(`"trace_id":"${traceId}"`);
    }, 20_000);
  }

  test("an --otlp-endpoint that does not parse: the start fails, naming the flag", () => {
    const run = Bun.spawnSync(
      [
        process.execPath,
        join(repo, "src/main.ts"),
        "serve",
        "--dir",
        dir,
        "--otlp-endpoint",
        "collector:4318",
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    expect(run.exitCode).toBe(2);
    expect(run.stderr.toString()).toContain("--otlp-endpoint: must be an http:// or https:// URL");
  });

  test("without --otlp-endpoint no OpenTelemetry SDK code is loaded (with it, it is: the probe sees modules)", async () => {
    const script = join(dir, "loaded.ts");
    await writeFile(
      script,
      `import { startGateway } from ${JSON.stringify(join(repo, "src/cli/serve.ts"))};
import { parseServeConfig } from ${JSON.stringify(join(repo, "src/config/config.ts"))};
const flags = ["--dir", ${JSON.stringify(dir)}, "--bind", "127.0.0.1", "--http-port", "0", "--admin-port", "0", ...process.argv.slice(2)];
const gw = await startGateway(parseServeConfig(flags, {}));
const sdk = /@opentelemetry\\/(sdk-trace|exporter-trace-otlp-http|otlp-exporter-base|resources)\\/|observability\\/tracing\\/(tracing|span-export)\\.ts/;
process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((k) => sdk.test(k)).length));
await gw.stop({ delayMs: 0, timeoutMs: 1000 });
`,
    );
    const loaded = async (extra: string[]) => {
      const run = Bun.spawn([process.execPath, script, ...extra], { stdout: "pipe", stderr: "pipe" });
      const [out, err] = await Promise.all([
        new Response(run.stdout).text(),
        new Response(run.stderr).text(),
      ]);
      if ((await run.exited) !== 0) throw new Error(err);
      return Number(out);
    };
    expect(await loaded([])).toBe(0);
    expect(await loaded(["--otlp-endpoint", receiver.url])).toBeGreaterThan(10);
  }, 30_000);
});
