/**
 * A sampled request's SERVER span, made with the official OpenTelemetry SDK (`@opentelemetry/sdk-trace`)
 * and sent over OTLP/HTTP (JSON, `@opentelemetry/exporter-trace-otlp-http`) to `--otlp-endpoint`.
 *
 * Off the hot path: the span object is made only when the request has ended (its ids were chosen when it
 * arrived, trace-context.ts, since the upstream needed ours first: the SDK's id generator hands those out),
 * and the SDK's BatchSpanProcessor sends batches from a timer. The queue is bounded: a span that finds
 * `maxQueueSize` spans waiting is dropped, and so is a batch whose export fails (endpoint down, slow past
 * `timeoutMs`, refused); both are counted (`gatehouse_trace_spans_dropped_total{reason}`), never retried
 * at the cost of requests.
 */

import {
  type Attributes,
  createTraceState,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace as traceApi,
} from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOnSampler,
  BatchSpanProcessor,
  type IdGenerator,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { RequestTrace } from "./trace-context.ts";

/** Where spans went: counted by the caller (metrics). */
export interface SpanCounts {
  exported(n: number): void;
  /** `detail`: why an export failed (the exporter's error message), for the log. */
  dropped(reason: "queue_full" | "export_failed", n: number, detail?: string): void;
}

export interface SpanExportOptions {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  readonly url: string;
  readonly counts: SpanCounts;
  /** Spans waiting to be sent, at most (the SDK's default, 2048). */
  readonly maxQueueSize?: number;
  /** Spans in one export request (the SDK's default, 512). */
  readonly maxBatchSize?: number;
  /** Longest a span waits before its batch is sent, ms. */
  readonly delayMs?: number;
  /** Longest one export may take, ms; past it the batch is dropped. */
  readonly timeoutMs?: number;
}

/** What the observer knows about a request once it has been answered. */
export interface ServedRequest {
  readonly method: string;
  /** The Host header as sent ("" when none). */
  readonly host: string;
  /** The path without the query. */
  readonly path: string;
  readonly status: number;
  /** The configured route name; "" when none matched. */
  readonly route: string;
  /** `ip:port` of the last endpoint tried; "" when not forwarded. */
  readonly endpoint: string;
  readonly client: string;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
}

/** Hands the SDK the ids chosen when the request arrived (startSpan asks for them synchronously). */
class PresetIds implements IdGenerator {
  traceId = "";
  spanId = "";
  generateTraceId(): string {
    return this.traceId;
  }
  generateSpanId(): string {
    return this.spanId;
  }
}

const METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "CONNECT",
  "OPTIONS",
  "TRACE",
  "PATCH",
]);

export class SpanExport {
  private readonly ids = new PresetIds();
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;
  /** Spans handed to the batch processor and not yet taken by an export: its queue, counted here. */
  private queued = 0;

  constructor(options: SpanExportOptions) {
    const max = options.maxQueueSize ?? 2048;
    const timeoutMs = options.timeoutMs ?? 10_000;
    const counts = options.counts;
    const batchSize = Math.min(options.maxBatchSize ?? 512, max);
    // The timer sends one batch at a time; a flush or the stop sends the whole queue at once, which this
    // limit must let through (past it the exporter fails a batch instead of sending it).
    const concurrencyLimit = Math.ceil(max / batchSize) + 1;
    const otlp = new OTLPTraceExporter({ url: options.url, timeoutMillis: timeoutMs, concurrencyLimit });
    const exporter: SpanExporter = {
      export: (spans, done) => {
        this.queued -= spans.length;
        otlp.export(spans, (result) => {
          // ExportResultCode.SUCCESS is 0.
          if (result.code === 0) counts.exported(spans.length);
          else counts.dropped("export_failed", spans.length, result.error?.message);
          done(result);
        });
      },
      shutdown: () => otlp.shutdown(),
      forceFlush: () => otlp.forceFlush(),
    };
    const batch = new BatchSpanProcessor({
      exporter,
      maxQueueSize: max,
      maxExportBatchSize: batchSize,
      scheduledDelayMillis: options.delayMs ?? 1000,
      exportTimeoutMillis: timeoutMs + 1000,
    });
    // The SDK's processor drops silently when full: the same bound is kept here, where it can be counted.
    const bounded: SpanProcessor = {
      onStart: () => {},
      onEnd: (span: ReadableSpan) => {
        if (this.queued >= max) {
          counts.dropped("queue_full", 1);
          return;
        }
        this.queued++;
        batch.onEnd(span);
      },
      forceFlush: () => batch.forceFlush(),
      shutdown: () => batch.shutdown(),
    };
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({ "service.name": "gatehouse" }),
      sampler: new AlwaysOnSampler(),
      idGenerator: this.ids,
      spanProcessors: [bounded],
    });
    this.tracer = this.provider.getTracer("gatehouse");
  }

  /** The request's SERVER span, from its arrival until now (its response head was sent). */
  end(t: RequestTrace, r: ServedRequest): void {
    this.ids.traceId = t.traceId;
    this.ids.spanId = t.spanId;
    const parent =
      t.parentSpanId === ""
        ? ROOT_CONTEXT
        : traceApi.setSpanContext(ROOT_CONTEXT, {
            traceId: t.traceId,
            spanId: t.parentSpanId,
            traceFlags: TraceFlags.SAMPLED,
            isRemote: true,
            ...(t.traceState === "" ? {} : { traceState: createTraceState(t.traceState) }),
          });
    const known = METHODS.has(r.method);
    const method = known ? r.method : "_OTHER";
    // OpenTelemetry's HTTP server span conventions, then ours (gatehouse.*) for what they have no name for.
    // What is not known for this request (no route matched, not forwarded) is left out, not sent empty.
    const attributes: Attributes = {
      "http.request.method": method,
      "url.path": r.path,
      "url.scheme": t.scheme,
      "server.port": t.port,
      "http.response.status_code": r.status,
    };
    if (r.host !== "") attributes["server.address"] = hostOnly(r.host);
    if (r.client !== "") attributes["client.address"] = r.client;
    if (r.route !== "") attributes["gatehouse.route"] = r.route;
    if (t.backend !== "") attributes["gatehouse.backend"] = t.backend;
    if (r.endpoint !== "") attributes["gatehouse.endpoint"] = r.endpoint;
    if (t.attempts > 0) attributes["gatehouse.attempts"] = t.attempts;
    if (!known) attributes["http.request.method_original"] = r.method;
    if (t.attempts > 1) attributes["http.request.resend_count"] = t.attempts - 1;
    if (r.status >= 500) attributes["error.type"] = String(r.status);
    const span = this.tracer.startSpan(
      method,
      { kind: SpanKind.SERVER, startTime: r.started, attributes },
      parent,
    );
    if (r.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(performance.now());
  }

  /** Sends what is queued now; resolves once the export is done (or failed). */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  /** Sends what is queued (within `ms`), then stops. */
  async shutdown(ms = 2000): Promise<void> {
    let timer: Timer | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    await Promise.race([this.provider.shutdown().catch(() => {}), deadline]);
    // Cleared, so that a quick shutdown does not hold the process open until the deadline.
    clearTimeout(timer);
  }
}

/** The Host header without its port (`[v6]:port` keeps its brackets' content). */
function hostOnly(host: string): string {
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    return end < 0 ? host : host.slice(1, end);
  }
  const colon = host.lastIndexOf(":");
  return colon < 0 ? host : host.slice(0, colon);
}
