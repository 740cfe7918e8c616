import { describe, expect, test } from "bun:test";
import { parseTraceParent, TraceSampler, traceUpstream } from "./trace-context.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";

function headers(fields: Record<string, string>) {
  const h = new Headers(fields);
  return { get: (name: string) => h.get(name) };
}

describe("parseTraceParent (W3C Trace Context, level 1)", () => {
  test("reads a valid header: ids and the sampled flag", () => {
    expect(parseTraceParent(`00-${TRACE}-${PARENT}-01`)).toEqual({
      traceId: TRACE,
      parentId: PARENT,
      sampled: true,
    });
    expect(parseTraceParent(`00-${TRACE}-${PARENT}-00`)?.sampled).toBe(false);
    // Other flag bits do not change the sampled bit.
    expect(parseTraceParent(`00-${TRACE}-${PARENT}-03`)?.sampled).toBe(true);
    expect(parseTraceParent(`00-${TRACE}-${PARENT}-02`)?.sampled).toBe(false);
    // A later version may carry more fields after a dash; read as version 00.
    expect(parseTraceParent(`01-${TRACE}-${PARENT}-01-what-comes-next`)?.traceId).toBe(TRACE);
  });

  test("refuses what the spec calls invalid", () => {
    for (const bad of [
      null,
      "",
      `00-${TRACE.toUpperCase()}-${PARENT}-01`,
      `ff-${TRACE}-${PARENT}-01`,
      `00-${"0".repeat(32)}-${PARENT}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `00-${TRACE}-${PARENT}-01-extra`,
      `01-${TRACE}-${PARENT}-01x`,
      `00-${TRACE}-${PARENT}-0g`,
      `00-${TRACE.slice(1)}-${PARENT}-01`,
      `00_${TRACE}_${PARENT}_01`,
      // A repeated header arrives joined: not one valid value.
      `00-${TRACE}-${PARENT}-01, 00-${TRACE}-${PARENT}-01`,
    ])
      expect(parseTraceParent(bad)).toBeUndefined();
  });
});

describe("TraceSampler", () => {
  test("a caller's sampled trace is continued at any rate: its trace id, a new span id, its tracestate", () => {
    const t = new TraceSampler(0).start(
      headers({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: "a=1" }),
      "https",
      443,
    );
    expect(t).toMatchObject({
      traceId: TRACE,
      parentSpanId: PARENT,
      sampled: true,
      traceState: "a=1",
      port: 443,
    });
    expect(t?.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(t?.spanId).not.toBe(PARENT);
    expect(t?.upstreamHeader).toBe(`00-${TRACE}-${t?.spanId}-01`);
  });

  test("a caller's unsampled trace stays unsampled at rate 1: its id kept for the log, no span id, nothing to send", () => {
    const t = new TraceSampler(1).start(headers({ traceparent: `00-${TRACE}-${PARENT}-00` }), "http", 80);
    expect(t).toMatchObject({ traceId: TRACE, spanId: "", sampled: false, upstreamHeader: "" });
  });

  test("no valid parent: rate 1 starts a root trace (fresh ids, no tracestate); rate 0 traces nothing", () => {
    const h = headers({ traceparent: "garbage", tracestate: "stray=1" });
    const t = new TraceSampler(1).start(h, "http", 80);
    expect(t).toMatchObject({ parentSpanId: "", sampled: true, traceState: "" });
    expect(t?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(t?.traceId).not.toBe("0".repeat(32));
    const u = new TraceSampler(1).start(h, "http", 80);
    expect(u?.traceId).not.toBe(t?.traceId);
    expect(new TraceSampler(0).start(h, "http", 80)).toBeUndefined();
  });

  test("a rate between samples about that share of new traces", () => {
    const sampler = new TraceSampler(0.25);
    const h = headers({});
    let sampled = 0;
    for (let i = 0; i < 20_000; i++) if (sampler.start(h, "http", 80) !== undefined) sampled++;
    expect(sampled / 20_000).toBeGreaterThan(0.22);
    expect(sampled / 20_000).toBeLessThan(0.28);
  });
});

describe("traceUpstream", () => {
  test("sets our span as the upstream's parent; a trace started here drops the client's tracestate", () => {
    const started = new TraceSampler(1).start(headers({}), "http", 80);
    if (started === undefined) throw new Error("rate 1 must sample");
    const h = new Headers({ traceparent: "garbage", tracestate: "stray=1" });
    traceUpstream(started, h, "ns/svc:80");
    expect(h.get("traceparent")).toBe(started.upstreamHeader);
    expect(h.get("tracestate")).toBeNull();
    expect(started.backend).toBe("ns/svc:80");

    const continued = new TraceSampler(0).start(
      headers({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: "a=1" }),
      "http",
      80,
    );
    if (continued === undefined) throw new Error("a sampled parent must be continued");
    const k = new Headers({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: "a=1" });
    traceUpstream(continued, k, "ns/svc:80");
    expect(k.get("traceparent")).toBe(`00-${TRACE}-${continued.spanId}-01`);
    expect(k.get("tracestate")).toBe("a=1");
  });
});
