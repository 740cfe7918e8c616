/**
 * Tracing as `gatehouse serve` starts it when `--otlp-endpoint` is set (serve.ts imports this file only
 * then, so a gateway without tracing loads no OpenTelemetry code): the sampler both fronts ask when a
 * request arrives, the span export the observer hands ended requests to, and their counters.
 */

import { Counter, type Registry } from "prom-client";
import { rateLimitedLog } from "../log-limit.ts";
import { logger } from "../logger.ts";
import { SpanExport, type SpanExportOptions } from "./span-export.ts";
import { TraceSampler } from "./trace-context.ts";

export interface Tracing {
  readonly sampler: TraceSampler;
  readonly spans: SpanExport;
}

export function startTracing(
  url: string,
  sampleRate: number,
  registry: Registry,
  options: Omit<SpanExportOptions, "url" | "counts"> = {},
): Tracing {
  const exported = new Counter({
    name: "gatehouse_trace_spans_exported_total",
    help: "Request spans the OTLP endpoint (--otlp-endpoint) accepted.",
    registers: [registry],
  });
  const dropped = new Counter({
    name: "gatehouse_trace_spans_dropped_total",
    help: "Request spans not sent, by reason (queue_full: the export queue was full; export_failed: the OTLP endpoint refused, failed or did not answer in time).",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  // Present from the start, so a dashboard or alert sees 0 rather than no series.
  dropped.inc({ reason: "queue_full" }, 0);
  dropped.inc({ reason: "export_failed" }, 0);
  const limited = rateLimitedLog(logger.child({ component: "tracing" }));
  // Logged without any user:password the URL may carry.
  const shown = new URL(url);
  const endpoint = `${shown.origin}${shown.pathname}`;
  const spans = new SpanExport({
    url,
    counts: {
      exported: (n) => exported.inc(n),
      dropped: (reason, n, detail) => {
        dropped.inc({ reason }, n);
        // The counter says how many; one line per reason per 10 s says why, without a line per span.
        const why =
          reason === "queue_full" ? "trace spans dropped: export queue full" : "trace export failed";
        limited("warn", reason, why, { endpoint, spans: n, ...(detail ? { error: detail } : {}) });
      },
    },
    ...options,
  });
  return { sampler: new TraceSampler(sampleRate), spans };
}
