/**
 * A sampled request's `traceparent` on the raw front's upstream head (observability/tracing/): our span
 * as the parent. The byte-built head takes it as one more claim edit (the client's field dropped, ours
 * added), so untraced requests keep the plain head untouched; the Headers-built head takes it as a first
 * request filter (the route's own filters run after it, as on the full request path).
 */

import type { RequestTrace } from "../../observability/tracing/trace-context.ts";
import type { RequestContext } from "../filters/filter-types.ts";
import type { ClaimEdit } from "./http1/head-to-upstream.ts";

const CONTINUED = ["traceparent"];
/** A trace that starts here drops the client's `tracestate` (it belonged to no valid parent). */
const STARTED = ["traceparent", "tracestate"];

/** `edit` (the guards' claim headers, if any) plus the trace's field. */
export function withTraceEdit(t: RequestTrace, edit: ClaimEdit | undefined): ClaimEdit {
  const drop = t.parentSpanId === "" ? STARTED : CONTINUED;
  const line = `traceparent: ${t.upstreamHeader}\r\n`;
  if (edit === undefined) return { remove: drop, lines: line };
  return { remove: [...edit.remove, ...drop], lines: edit.lines + line };
}

/** The same as a request filter, for heads built from Headers. */
export function traceFilter(t: RequestTrace): (ctx: RequestContext) => undefined {
  return (ctx) => {
    ctx.headers.set("traceparent", t.upstreamHeader);
    if (t.parentSpanId === "") ctx.headers.delete("tracestate");
    return undefined;
  };
}
