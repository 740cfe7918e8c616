/**
 * The JSON access-log line: `time`, `level: "info"`, `msg: "access"`, then the fields `--access-log-fields`
 * names, in its order (`level` and `msg` always: they tell an access line from an application log line).
 * The default is the set every release before the flag wrote, so an unset flag changes nothing. A name
 * the table does not know stops the start, with the list of known ones.
 */
import type { AccessRecord, LineFormat, RequestNeeds } from "./record.ts";
import { roundMs } from "./record.ts";

type FieldValue = string | number;

interface Field {
  readonly get: (r: AccessRecord) => FieldValue;
  /** A request field it reads (lower-case), or `length` for the request's length. */
  readonly reads?: string;
}

const LENGTH = ":length";

const FIELDS: Readonly<Record<string, Field>> = {
  request_id: { get: (r) => r.requestId },
  client: { get: (r) => r.client },
  method: { get: (r) => r.method },
  host: { get: (r) => r.host },
  path: { get: (r) => r.path },
  status: { get: (r) => r.status },
  bytes: { get: (r) => r.bytes },
  duration_ms: { get: (r) => roundMs(r.durationMs) },
  upstream: { get: (r) => r.upstream },
  upstream_ms: { get: (r) => roundMs(r.upstreamMs) },
  route: { get: (r) => r.route },
  trace_id: { get: (r) => r.traceId },
  // Not in the default set: named to be written.
  backend: { get: (r) => r.backend },
  upstream_status: { get: (r) => (r.upstreamStatus > 0 ? r.upstreamStatus : -1) },
  protocol: { get: (r) => r.request?.protocol ?? "", reads: "" },
  user_agent: { get: (r) => r.request?.header("user-agent") ?? "", reads: "user-agent" },
  referer: { get: (r) => r.request?.header("referer") ?? "", reads: "referer" },
  request_length: { get: (r) => r.request?.length ?? -1, reads: LENGTH },
};

/** The fields written when `--access-log-fields` is not given. */
export const DEFAULT_ACCESS_LOG_FIELDS: readonly string[] = [
  "time",
  "request_id",
  "client",
  "method",
  "host",
  "path",
  "status",
  "bytes",
  "duration_ms",
  "upstream",
  "upstream_ms",
  "route",
  "trace_id",
];

/** Every name `--access-log-fields` takes. */
export const ACCESS_LOG_FIELD_NAMES: readonly string[] = ["time", ...Object.keys(FIELDS)];

/** `--access-log-fields` (comma-separated) as names, or why it is refused. */
export function parseAccessLogFields(list: string): readonly string[] | { readonly error: string } {
  const names = list
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  if (names.length === 0) return { error: "names no field" };
  const seen = new Set<string>();
  for (const n of names) {
    if (n !== "time" && !Object.hasOwn(FIELDS, n))
      return { error: `unknown field "${n}" (known: ${ACCESS_LOG_FIELD_NAMES.join(", ")})` };
    if (seen.has(n)) return { error: `field "${n}" is named twice` };
    seen.add(n);
  }
  return names;
}

/** The default line, written as one object literal: about half the time of the general loop below. */
const DEFAULT_FORMAT: LineFormat = {
  request: undefined,
  line: (r, now) =>
    `${JSON.stringify({
      time: new Date(now).toISOString(),
      level: "info",
      msg: "access",
      request_id: r.requestId,
      client: r.client,
      method: r.method,
      host: r.host,
      path: r.path,
      status: r.status,
      bytes: r.bytes,
      duration_ms: roundMs(r.durationMs),
      upstream: r.upstream,
      upstream_ms: roundMs(r.upstreamMs),
      route: r.route,
      trace_id: r.traceId,
    })}\n`,
};

/** The JSON line with `names` (checked by parseAccessLogFields; the default set when absent). */
export function jsonLineFormat(names: readonly string[] = DEFAULT_ACCESS_LOG_FIELDS): LineFormat {
  if (names.join() === DEFAULT_ACCESS_LOG_FIELDS.join()) return DEFAULT_FORMAT;
  const withTime = names.includes("time");
  const fields: [string, Field][] = [];
  for (const n of names) {
    const f = FIELDS[n];
    if (f !== undefined) fields.push([n, f]);
  }
  const reads = fields.flatMap(([, f]) => (f.reads === undefined ? [] : [f.reads]));
  const request: RequestNeeds | undefined =
    reads.length === 0
      ? undefined
      : { fields: reads.filter((n) => n !== "" && n !== LENGTH), length: reads.includes(LENGTH) };
  // Joined from pre-made `,"name":` keys and each value's JSON text (faster than an object to stringify).
  const keys = fields.map(([name]) => `,${JSON.stringify(name)}:`);
  const getters = fields.map(([, f]) => f.get);
  const head = '"level":"info","msg":"access"';
  return {
    request,
    line(r, now) {
      let out = withTime ? `{"time":"${new Date(now).toISOString()}",${head}` : `{${head}`;
      for (let i = 0; i < getters.length; i++) {
        const v = (getters[i] as Field["get"])(r);
        out += `${keys[i]}${typeof v === "number" ? String(v) : JSON.stringify(v)}`;
      }
      return `${out}}\n`;
    },
  };
}
