/**
 * A real OTLP/HTTP traces receiver for tests: `POST /v1/traces` with the JSON encoding the SDK's exporter
 * sends (@opentelemetry/exporter-trace-otlp-http; ids as hex, times as decimal nanosecond strings, as the
 * OTLP spec's JSON mapping says), answered with the SDK's own response type. `hold` makes it a collector
 * that takes requests and never answers (a slow one, for the exporter's timeout).
 */
import type { IExportTraceServiceResponse } from "@opentelemetry/otlp-transformer";
import type { Server } from "bun";

/** OTLP AnyValue in its JSON form (the kinds the gateway's spans use). */
export interface OtlpValue {
  readonly stringValue?: string;
  /** int64: a number or a decimal string in OTLP/JSON. */
  readonly intValue?: number | string;
  readonly boolValue?: boolean;
  readonly doubleValue?: number;
}

export interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Absent (or "") for a root span. */
  readonly parentSpanId?: string;
  readonly traceState?: string;
  readonly name: string;
  /** SpanKind in OTLP numbering: 2 is SERVER. */
  readonly kind: number;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes: readonly { readonly key: string; readonly value: OtlpValue }[];
  /** 2 is ERROR. */
  readonly status?: { readonly code?: number };
}

interface ExportTraceServiceRequest {
  readonly resourceSpans: readonly {
    readonly resource?: { readonly attributes: readonly { key: string; value: OtlpValue }[] };
    readonly scopeSpans: readonly {
      readonly scope?: { name: string };
      readonly spans: readonly OtlpSpan[];
    }[];
  }[];
}

export interface OtlpReceiver {
  readonly url: string;
  readonly spans: OtlpSpan[];
  /** `service.name` of every resource seen. */
  readonly services: Set<string>;
  /** Export requests that arrived (held ones included). */
  requests(): number;
  /** Spans for which `match` holds, waiting up to `ms` for `n` of them. */
  waitFor(match: (s: OtlpSpan) => boolean, n?: number, ms?: number): Promise<OtlpSpan[]>;
  stop(): Promise<void>;
}

/** The attributes of `s` as plain values (int64 strings as numbers). */
export function attributesOf(s: OtlpSpan): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of s.attributes) {
    const v = value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.intValue;
    if (v !== undefined) out[key] = typeof v === "string" && value.intValue !== undefined ? Number(v) : v;
  }
  return out;
}

export function startOtlpReceiver(opts: { hold?: boolean } = {}): OtlpReceiver {
  const spans: OtlpSpan[] = [];
  const services = new Set<string>();
  const held: (() => void)[] = [];
  let requests = 0;
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      requests++;
      const path = new URL(req.url).pathname;
      if (req.method !== "POST" || path !== "/v1/traces") return new Response("not found", { status: 404 });
      if (req.headers.get("content-type") !== "application/json")
        return new Response("unsupported media type", { status: 415 });
      const body = (await req.json()) as ExportTraceServiceRequest;
      if (opts.hold) {
        await new Promise<void>((resolve) => held.push(resolve));
        return new Response(null, { status: 503 });
      }
      for (const rs of body.resourceSpans) {
        for (const a of rs.resource?.attributes ?? [])
          if (a.key === "service.name" && a.value.stringValue !== undefined)
            services.add(a.value.stringValue);
        for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      const answer: IExportTraceServiceResponse = {};
      return Response.json(answer);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/v1/traces`,
    spans,
    services,
    requests: () => requests,
    async waitFor(match, n = 1, ms = 5000) {
      const deadline = performance.now() + ms;
      for (;;) {
        const found = spans.filter(match);
        if (found.length >= n || performance.now() > deadline) return found;
        await Bun.sleep(20);
      }
    },
    async stop() {
      for (const release of held.splice(0)) release();
      await server.stop(true);
    },
  };
}
