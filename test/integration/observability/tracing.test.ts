/**
 * OpenTelemetry tracing through a real GatewayServer, on both fronts, exported by the SDK over OTLP/HTTP
 * to a real receiver (test/helpers/otlp-receiver.ts): a SERVER span per sampled request whose id the
 * upstream sees as its parent, the caller's trace and sampling decision kept, the trace id in the access
 * log. On the raw front `/api` and `/hdr` are its fast path (`/hdr` with a header filter), `/mirrored` is
 * relayed to `handleRequest`. A collector that is down or slow: tracing-export.test.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { AccessLog } from "../../../src/observability/access-log/access-log.ts";
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
import { type Received, startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import {
  attributesOf,
  type OtlpReceiver,
  type OtlpSpan,
  startOtlpReceiver,
} from "../../helpers/otlp-receiver.ts";

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const UPSTREAM_PARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

interface Gateway {
  readonly proxy: GatewayServer;
  readonly base: string;
  readonly lines: string[];
  readonly metrics: GatewayMetrics;
  readonly tracing: Tracing;
}

forEachFront("tracing", (front) => {
  let app: TestUpstream;
  let mirror: TestUpstream;
  let receiver: OtlpReceiver;
  /** Sample rate 1: every request without a parent starts a trace. */
  let all: Gateway;
  /** Sample rate 0: only a caller's sampled trace is traced. */
  let none: Gateway;

  async function gateway(rate: number): Promise<Gateway> {
    const metrics = new GatewayMetrics({ processMetrics: false });
    const lines: string[] = [];
    const tracing = startTracing(receiver.url, rate, metrics.registry, { delayMs: 20 });
    const proxy = new GatewayServer({
      bind: "127.0.0.1",
      front,
      observer: new MetricsAndAccessLog(metrics, new AccessLog(1, (l) => lines.push(l)), tracing),
    });
    const set = [{ name: "x-set", value: "v" }];
    await proxy.apply(
      model(
        [
          listener([
            vhost("app.test", [
              route("r/api", match("/api"), forwardTo("test/app:80")),
              route("r/hdr", match("/hdr"), forwardTo("test/app:80"), {
                filters: [{ kind: "RequestHeaderModifier", edits: { set, add: [], remove: [] } }],
              }),
              route("r/mirrored", match("/mirrored"), forwardTo("test/app:80"), {
                filters: [{ kind: "RequestMirror", backendId: "test/mirror:80", percent: 100 }],
              }),
              route("r/retried", match("/status"), forwardTo("test/app:80"), {
                retry: { attempts: 1, codes: [503], backoffMs: 0 },
              }),
            ]),
          ]),
        ],
        [backend("test/app:80", [app.port]), backend("test/mirror:80", [mirror.port])],
      ),
    );
    return { proxy, base: `http://127.0.0.1:${proxy.ports()[0]?.port}`, lines, metrics, tracing };
  }

  beforeAll(async () => {
    app = startUpstream("app");
    mirror = startUpstream("mirror");
    receiver = startOtlpReceiver();
    all = await gateway(1);
    none = await gateway(0);
  });

  afterAll(async () => {
    for (const g of [all, none]) {
      await g?.proxy.stop();
      await g?.tracing.spans.shutdown();
    }
    await app?.stop();
    await mirror?.stop();
    await receiver?.stop();
  });

  async function get(g: Gateway, path: string, headers: Record<string, string> = {}): Promise<number> {
    const res = await fetch(`${g.base}${path}`, { headers: { host: "app.test", ...headers } });
    await res.arrayBuffer();
    return res.status;
  }

  /** What the app upstream received for the request whose `x-probe` was `probe`. */
  function receivedBy(probe: string): Received {
    const got = app.requests.find((r) => r.headers["x-probe"] === probe);
    if (got === undefined) throw new Error(`the upstream saw no request ${probe}`);
    return got;
  }

  function logged(g: Gateway, path: string): Record<string, unknown> {
    const line = g.lines.findLast((l) => JSON.parse(l).path === path);
    if (line === undefined) throw new Error(`no access-log line for ${path}`);
    return JSON.parse(line);
  }

  /** The spans of trace `traceId`, after the export had time to send any (more than one is a bug). */
  async function spansOf(traceId: string, expected: number): Promise<OtlpSpan[]> {
    await receiver.waitFor((s) => s.traceId === traceId, expected);
    // Long enough for a second (duplicate) span to be exported too: the batch delay is 20 ms.
    await Bun.sleep(150);
    return receiver.spans.filter((s) => s.traceId === traceId);
  }

  for (const [path, routeName] of [
    ["/api/x", "r/api"],
    ["/hdr", "r/hdr"],
    ["/mirrored", "r/mirrored"],
  ] as const) {
    test(`${path}: a caller's sampled trace goes on: one SERVER span, the upstream's parent; trace id, parent, tracestate kept`, async () => {
      const traceId = hex(16);
      const parent = hex(8);
      const probe = hex(4);
      const status = await get(none, path, {
        traceparent: `00-${traceId}-${parent}-01`,
        tracestate: "vendor=abc,other=1",
        "x-probe": probe,
      });
      expect(status).toBe(200);
      const up = receivedBy(probe).headers;
      const [, upTrace, upParent] = UPSTREAM_PARENT.exec(up.traceparent ?? "") ?? [];
      expect(upTrace).toBe(traceId);
      expect(upParent).not.toBe(parent);
      expect(up.tracestate).toBe("vendor=abc,other=1");
      if (path === "/hdr") expect(up["x-set"]).toBe("v");
      const spans = await spansOf(traceId, 1);
      expect(spans.length).toBe(1);
      const span = spans[0] as OtlpSpan;
      expect(span).toMatchObject({ spanId: upParent, parentSpanId: parent, kind: 2, name: "GET" });
      expect(span.traceState).toBe("vendor=abc,other=1");
      expect(attributesOf(span)).toMatchObject({
        "http.request.method": "GET",
        "url.path": path,
        "server.address": "app.test",
        "http.response.status_code": 200,
        "gatehouse.route": routeName,
        "gatehouse.backend": "test/app:80",
        "gatehouse.endpoint": `127.0.0.1:${app.port}`,
        "gatehouse.attempts": 1,
        "client.address": "127.0.0.1",
      });
      // Times are the request's own: it started before it ended, within the last few seconds.
      const start = BigInt(span.startTimeUnixNano);
      const end = BigInt(span.endTimeUnixNano);
      expect(end >= start).toBe(true);
      expect(Math.abs(Number(start / 1_000_000n) - Date.now())).toBeLessThan(10_000);
      expect(receiver.services.has("gatehouse")).toBe(true);
      expect(logged(none, path).trace_id).toBe(traceId);
    });
  }

  test("no traceparent, sample rate 1: a trace starts here (a root span, the upstream's parent); a stray tracestate is dropped", async () => {
    const probe = hex(4);
    // Upper-case hex is not a valid traceparent: treated as absent.
    const invalid = `00-${hex(16).toUpperCase()}-${hex(8)}-01`;
    expect(
      await get(all, "/api/new", { traceparent: invalid, tracestate: "stray=1", "x-probe": probe }),
    ).toBe(200);
    const up = receivedBy(probe).headers;
    const [, traceId, spanId] = UPSTREAM_PARENT.exec(up.traceparent ?? "") ?? [];
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(up.tracestate).toBeUndefined();
    const spans = await spansOf(traceId as string, 1);
    expect(spans.length).toBe(1);
    expect(spans[0]?.spanId).toBe(spanId as string);
    expect(spans[0]?.parentSpanId ?? "").toBe("");
    expect(logged(all, "/api/new").trace_id).toBe(traceId as string);
  });

  test("a retried request: one span with its attempts, the last status, marked an error", async () => {
    const traceId = hex(16);
    expect(await get(none, "/status/503", { traceparent: `00-${traceId}-${hex(8)}-01` })).toBe(503);
    const spans = await spansOf(traceId, 1);
    expect(spans.length).toBe(1);
    expect(attributesOf(spans[0] as OtlpSpan)).toMatchObject({
      "gatehouse.route": "r/retried",
      "gatehouse.attempts": 2,
      "http.request.resend_count": 1,
      "http.response.status_code": 503,
      "error.type": "503",
    });
    expect(spans[0]?.status?.code).toBe(2);
  });

  test("a request no route matches is traced too, with no route, backend or endpoint", async () => {
    const traceId = hex(16);
    expect(await get(none, "/nowhere", { traceparent: `00-${traceId}-${hex(8)}-01` })).toBe(404);
    const spans = await spansOf(traceId, 1);
    expect(spans.length).toBe(1);
    const attrs = attributesOf(spans[0] as OtlpSpan);
    expect(attrs["http.response.status_code"]).toBe(404);
    expect(Object.keys(attrs).filter((k) => k.startsWith("gatehouse."))).toEqual([]);
  });

  test("a caller's unsampled trace is honoured (even at rate 1): no span, its traceparent sent on unchanged, its id logged", async () => {
    const traceId = hex(16);
    const traceparent = `00-${traceId}-${hex(8)}-00`;
    const probe = hex(4);
    expect(await get(all, "/api/unsampled", { traceparent, tracestate: "v=1", "x-probe": probe })).toBe(200);
    const up = receivedBy(probe).headers;
    expect(up.traceparent).toBe(traceparent);
    expect(up.tracestate).toBe("v=1");
    expect(await spansOf(traceId, 0)).toEqual([]);
    expect(logged(all, "/api/unsampled").trace_id).toBe(traceId);
  });

  test("sample rate 0 and no traceparent: no span, no trace header sent, an empty trace_id", async () => {
    const probe = hex(4);
    const before = receiver.spans.length;
    expect(await get(none, "/api/untraced", { "x-probe": probe })).toBe(200);
    expect(receivedBy(probe).headers.traceparent).toBeUndefined();
    await Bun.sleep(150);
    expect(
      receiver.spans.slice(before).filter((s) => attributesOf(s)["url.path"] === "/api/untraced"),
    ).toEqual([]);
    expect(logged(none, "/api/untraced").trace_id).toBe("");
  });

  test("exported spans are counted; none dropped", async () => {
    await all.tracing.spans.flush();
    const text = await all.metrics.text();
    const value = (series: string) =>
      Number(
        text
          .split("\n")
          .find((l) => l.startsWith(`${series} `))
          ?.split(" ")[1] ?? Number.NaN,
      );
    expect(value("gatehouse_trace_spans_exported_total")).toBeGreaterThanOrEqual(1);
    expect(value('gatehouse_trace_spans_dropped_total{reason="queue_full"}')).toBe(0);
    expect(value('gatehouse_trace_spans_dropped_total{reason="export_failed"}')).toBe(0);
  });
});
