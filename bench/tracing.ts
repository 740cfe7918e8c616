/**
 * Tracing section: what OpenTelemetry tracing (`--otlp-endpoint`, docs/observability.md) costs at
 * `--trace-sample-rate` 0, 0.01 and 1, against the same gateway without the flag. Four gateway processes
 * (one worker each, the default raw front) on the same folder; wrk rounds alternate between them. The
 * requests carry no `traceparent`, so the rate alone decides. Spans go to a small OTLP/HTTP sink in the
 * bench process that takes each export and answers at once (it counts spans, it does not decode them);
 * its CPU is not in the gateway's CPU µs/req, which is the figure to read on a machine this busy.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { measuredRun, type Run, type Target, targetPids } from "./procs.ts";
import { wrkTable } from "./proxy.ts";
import { median } from "./stats.ts";
import { localService, prefixIngress } from "./workload.ts";

const ns = "bench";
const host = "trace.bench";

function manifests(backendPort: number): string {
  const docs = [
    {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "gatehouse" },
      spec: { controller: "gatehouse.dev/ingress-controller" },
    },
    ...localService(ns, "backend", 80, backendPort),
    prefixIngress(ns, "traced", host, "/", "backend"),
  ];
  return docs.map((d) => stringify(d)).join("---\n");
}

/** Spans in an OTLP/JSON export body: each span has one `"spanId"` key (its parent's is `"parentSpanId"`). */
function countSpans(body: Buffer): number {
  const key = Buffer.from('"spanId"');
  let n = 0;
  for (let at = body.indexOf(key); at >= 0; at = body.indexOf(key, at + key.length)) n++;
  return n;
}

export async function tracingSection(ctx: BenchContext): Promise<string> {
  const { settings, procs } = ctx;
  const dir = join(ctx.work, "tracing");
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "traced.yaml"), manifests(ctx.backendPort));
  let exports = 0;
  let spans = 0;
  const sink = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = Buffer.from(await req.arrayBuffer());
      exports++;
      spans += countSpans(body);
      return Response.json({});
    },
  });
  const endpoint = `http://127.0.0.1:${sink.port}`;
  const rows: [string, string[]][] = [
    ["off", []],
    ["rate 0", ["--otlp-endpoint", endpoint, "--trace-sample-rate", "0"]],
    ["rate 0.01", ["--otlp-endpoint", endpoint, "--trace-sample-rate", "0.01"]],
    ["rate 1", ["--otlp-endpoint", endpoint, "--trace-sample-rate", "1"]],
  ];
  const gateways: Target[] = [];
  const out = [
    `four gateway processes (--workers 1, raw front) on one route, no traceparent sent; spans to an OTLP/HTTP sink in the bench process; wrk -t1 -c${settings.connections} -d${settings.seconds}s; ${settings.rounds} round(s)`,
  ];
  try {
    for (const [name, extra] of rows) {
      const port = await freePort();
      gateways.push(
        await procs.gatehouse({ dir, port, workers: 1, name, ready: { probe: "/", host }, extra }),
      );
    }
    // The readiness probes' spans (rate 1) arrive within the batch delay: not counted against a run.
    await Bun.sleep(1500);
    const samples = new Map<string, Run[]>(rows.map(([name]) => [name, []]));
    const spansPerRequest = new Map<string, { spans: number; requests: number }>();
    for (let r = 0; r < settings.rounds; r++) {
      const order = r % 2 === 0 ? gateways : [...gateways].reverse();
      for (const gw of order) {
        const before = spans;
        const run = await measuredRun(`tracing: ${gw.name}`, await targetPids(gw), {
          url: `${gw.url}/`,
          headers: { Host: host },
          seconds: settings.seconds,
          connections: settings.connections,
          threads: 1,
        });
        // The batch delay is 1 s: spans of this run still queued arrive during the next; wait for them.
        await Bun.sleep(1500);
        samples.get(gw.name)?.push(run);
        const acc = spansPerRequest.get(gw.name) ?? { spans: 0, requests: 0 };
        spansPerRequest.set(gw.name, {
          spans: acc.spans + spans - before,
          requests: acc.requests + run.requests,
        });
      }
    }
    out.push(wrkTable(samples, "off"));
    const shares = [...spansPerRequest]
      .map(
        ([name, c]) =>
          `${name} ${c.spans}/${c.requests} (${((100 * c.spans) / Math.max(1, c.requests)).toFixed(2)} %)`,
      )
      .join("; ");
    out.push(`spans the sink received per request served: ${shares}; ${exports} export requests in all`);
    const cpu = (name: string) =>
      median(
        (samples.get(name) ?? []).flatMap((s) =>
          s.cpuUsPerRequest === undefined ? [] : [s.cpuUsPerRequest],
        ),
      );
    const off = cpu("off");
    out.push(
      `CPU µs/req over off: rate 0 ${(cpu("rate 0") - off).toFixed(1)}, rate 0.01 ${(cpu("rate 0.01") - off).toFixed(1)}, rate 1 ${(cpu("rate 1") - off).toFixed(1)}`,
    );
  } finally {
    for (const gw of gateways) await gw.stop();
    await sink.stop(true);
  }
  return out.join("\n");
}
