/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) as the gateway takes part in it: the
 * `traceparent` a client sent is read, a request is sampled (the parent's flag when it sent a valid one,
 * else `--trace-sample-rate`), and a sampled request gets a span id of its own, sent upstream as the
 * parent of whatever the backend does. Plain data and string work only: the SDK (span-export.ts) sees a
 * request once it has ended. Nothing here runs when tracing is off (no `--otlp-endpoint`).
 */

import { randomFillSync } from "node:crypto";

/** Reads one request header (joined values when repeated): Headers, or the raw front's head lookup. */
export interface HeaderSource {
  get(name: string): string | null;
}

/** A request's place in a trace; on `RequestInfo.trace` while it is served. */
export interface RequestTrace {
  /** 32 lower-case hex digits: the client's trace, or a new one. */
  readonly traceId: string;
  /** Our span's id (16 hex digits); "" when the request is not sampled (no span is made). */
  readonly spanId: string;
  /** The client's span (16 hex digits); "" when the trace starts here. */
  readonly parentSpanId: string;
  readonly sampled: boolean;
  /** The client's `tracestate` for a continued trace, passed on as sent; "" otherwise. */
  readonly traceState: string;
  /** `traceparent` sent upstream for a sampled request: our span as the parent. */
  readonly upstreamHeader: string;
  readonly scheme: "http" | "https";
  /** The listener's port. */
  readonly port: number;
  /** The model's backend id (namespace/service:port) of the last attempt; "" when not forwarded. */
  backend: string;
  /** Forwarding attempts made (a retry or a resend on a fresh connection counts). */
  attempts: number;
}

/** A parsed valid `traceparent`. */
export interface TraceParent {
  readonly traceId: string;
  readonly parentId: string;
  readonly sampled: boolean;
}

const HEX = /^[0-9a-f]+$/;
const ZEROS_32 = "0".repeat(32);
const ZEROS_16 = "0".repeat(16);

/**
 * The spec's parsing: `version-traceid-parentid-flags`, lower-case hex; version ff and all-zero ids are
 * invalid; a version above 00 may carry more after a `-` (read as 00). A repeated header reaches us
 * joined with ", ", which no valid value contains: invalid, so a new trace starts (as the spec says).
 */
export function parseTraceParent(value: string | null): TraceParent | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (v.length < 55 || v[2] !== "-" || v[35] !== "-" || v[52] !== "-") return undefined;
  const version = v.slice(0, 2);
  if (!HEX.test(version) || version === "ff") return undefined;
  if (version === "00" ? v.length !== 55 : v.length > 55 && v[55] !== "-") return undefined;
  const traceId = v.slice(3, 35);
  const parentId = v.slice(36, 52);
  const flags = v.slice(53, 55);
  if (!HEX.test(traceId) || !HEX.test(parentId) || !HEX.test(flags)) return undefined;
  if (traceId === ZEROS_32 || parentId === ZEROS_16) return undefined;
  return { traceId, parentId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** Decides, when a request arrives, whether it is traced and with which ids. */
export class TraceSampler {
  /** @param rate share of requests without a valid parent that start a sampled trace, 0…1 */
  constructor(readonly rate: number) {}

  /**
   * A valid parent decides (sampled or not: the gateway honours the caller's choice); without one the
   * sample rate does. An unsampled request with a parent keeps its trace id (the access log names it) and
   * its headers go on unchanged; an unsampled one without a parent is not traced at all (undefined).
   */
  start(headers: HeaderSource, scheme: "http" | "https", port: number): RequestTrace | undefined {
    const parent = parseTraceParent(headers.get("traceparent"));
    const sampled =
      parent !== undefined ? parent.sampled : this.rate >= 1 || (this.rate > 0 && Math.random() < this.rate);
    if (!sampled) {
      if (parent === undefined) return undefined;
      return trace(parent.traceId, "", parent.parentId, false, "", scheme, port);
    }
    const ids = randomIds(parent === undefined);
    const traceId = parent?.traceId ?? ids.slice(16);
    const spanId = ids.slice(0, 16);
    const state = parent === undefined ? "" : (headers.get("tracestate") ?? "");
    return trace(traceId, spanId, parent?.parentId ?? "", true, state, scheme, port);
  }
}

function trace(
  traceId: string,
  spanId: string,
  parentSpanId: string,
  sampled: boolean,
  traceState: string,
  scheme: "http" | "https",
  port: number,
): RequestTrace {
  const upstreamHeader = sampled ? `00-${traceId}-${spanId}-01` : "";
  return {
    traceId,
    spanId,
    parentSpanId,
    sampled,
    traceState,
    upstreamHeader,
    scheme,
    port,
    backend: "",
    attempts: 0,
  };
}

/** Random bytes drawn 4 KiB at a time: one draw serves ~170 requests instead of one each. */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/** 16 hex digits of span id, then (when `withTrace`) 32 of trace id; never all zeros. */
function randomIds(withTrace: boolean): string {
  const n = withTrace ? 24 : 8;
  for (;;) {
    if (poolAt + n > pool.length) {
      randomFillSync(pool);
      poolAt = 0;
    }
    const hex = pool.toString("hex", poolAt, poolAt + n);
    poolAt += n;
    if (!hex.startsWith(ZEROS_16) && !(withTrace && hex.endsWith(ZEROS_32))) return hex;
  }
}

/**
 * The full request path's upstream fields for a sampled request: our span as the parent; a trace that
 * starts here drops the client's `tracestate` (it belonged to no valid parent, as the spec says).
 */
export function traceUpstream(t: RequestTrace, headers: Headers, backend: string): void {
  t.backend = backend;
  headers.set("traceparent", t.upstreamHeader);
  if (t.parentSpanId === "") headers.delete("tracestate");
}
