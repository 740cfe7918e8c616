/**
 * The nginx variables an `--access-log-format` template may name (ingress-nginx's `log-format-upstream`
 * ones, docs/observability.md has the table), each read from the access record. A value that is not there
 * is `undefined`, which the line writes as nginx does: `-` (`""` with `escape=json`). nginx variables
 * Gatehouse cannot fill are refused by name with the reason, so no template quietly logs `-` for them.
 */
import { normaliseHost } from "../../proxy/match/host.ts";
import { msec, timeIso8601, timeLocal } from "./log-time.ts";
import type { AccessRecord } from "./record.ts";

type Read = (r: AccessRecord, now: number) => string | undefined;

/** One variable: how to read it, and what of the request as sent it needs. */
export interface LogVariable {
  readonly read: Read;
  /** A request field it reads (lower-case). */
  readonly field?: string;
  /** It reads the request's target and protocol (`line`) or its length (`ArrivedRequest`). */
  readonly request?: "line" | "length";
}

const seconds = (ms: number): string => (ms / 1000).toFixed(3);
const orNone = (v: string): string | undefined => (v === "" ? undefined : v);

/** The query of the request-target, without `?`; "" when none. */
function query(r: AccessRecord): string | undefined {
  const target = r.request?.target;
  if (target === undefined) return undefined;
  const q = target.indexOf("?");
  return q < 0 ? "" : target.slice(q + 1);
}

/** `$remote_user`: the user name of Basic credentials, checked or not (as nginx). */
function basicUser(r: AccessRecord): string | undefined {
  const v = r.request?.header("authorization");
  if (v == null || v.length < 7 || v.slice(0, 6).toLowerCase() !== "basic ") return undefined;
  const decoded = Buffer.from(v.slice(6).trim(), "base64").toString("latin1");
  const colon = decoded.indexOf(":");
  return colon < 0 ? undefined : orNone(decoded.slice(0, colon));
}

const fromRequest = (read: Read): LogVariable => ({ read, request: "line" });

const VARIABLES: Readonly<Record<string, LogVariable>> = {
  remote_addr: { read: (r) => orNone(r.client) },
  remote_user: { read: basicUser, field: "authorization" },
  time_local: { read: (_r, now) => timeLocal(now) },
  time_iso8601: { read: (_r, now) => timeIso8601(now) },
  msec: { read: (_r, now) => msec(now) },
  request: fromRequest((r) => r.request && `${r.method} ${r.request.target} ${r.request.protocol}`),
  request_method: { read: (r) => r.method },
  request_uri: fromRequest((r) => r.request?.target),
  uri: { read: (r) => r.path },
  document_uri: { read: (r) => r.path },
  args: fromRequest(query),
  query_string: fromRequest(query),
  is_args: fromRequest((r) =>
    r.request === undefined ? undefined : r.request.target.includes("?") ? "?" : "",
  ),
  server_protocol: fromRequest((r) => r.request?.protocol),
  status: { read: (r) => String(r.status) },
  body_bytes_sent: { read: (r) => (r.bytes < 0 ? undefined : String(r.bytes)) },
  request_length: {
    read: (r) => (r.request === undefined ? undefined : String(r.request.length)),
    request: "length",
  },
  request_time: { read: (r) => seconds(r.durationMs) },
  host: { read: (r) => orNone(normaliseHost(r.host)) },
  upstream_addr: { read: (r) => orNone(r.upstream) },
  upstream_status: { read: (r) => (r.upstreamStatus > 0 ? String(r.upstreamStatus) : undefined) },
  upstream_response_time: { read: (r) => (r.upstreamMs < 0 ? undefined : seconds(r.upstreamMs)) },
  upstream_response_length: {
    read: (r) => (r.upstreamStatus > 0 && r.bytes >= 0 ? String(r.bytes) : undefined),
  },
  proxy_upstream_name: { read: (r) => orNone(r.backend) },
  // ingress-nginx fills it for a canary's requests only; a canary here is one more backend of the main
  // route, named by $proxy_upstream_name when it served the request.
  proxy_alternative_upstream_name: { read: () => "" },
  req_id: { read: (r) => orNone(r.requestId) },
  request_id: { read: (r) => orNone(r.requestId) },
  trace_id: { read: (r) => orNone(r.traceId) },
  opentelemetry_trace_id: { read: (r) => orNone(r.traceId) },
  route_name: { read: (r) => orNone(r.route) },
};

/** nginx variables refused by name, with why (others get the list of known ones). */
const NOT_FILLED: Readonly<Record<string, string>> = {
  bytes_sent: "response header bytes are not counted; $body_bytes_sent is",
  proxy_protocol_addr: "$remote_addr is the client a PROXY header names",
  remote_port: "client ports are not kept",
  scheme: "not kept per request",
  server_name: "not kept per request",
  server_addr: "not kept per request",
  server_port: "not kept per request",
  upstream_connect_time: "connects are not timed apart; $upstream_response_time is",
  upstream_header_time: "use $upstream_response_time (time to the upstream's response head)",
  namespace: "use $proxy_upstream_name (namespace/service:port) or $route_name",
  ingress_name: "use $route_name (ingress/<namespace>/<name>/…)",
  service_name: "use $proxy_upstream_name (namespace/service:port)",
  service_port: "use $proxy_upstream_name (namespace/service:port)",
};

/** Names of the variables a template may use (`http_<field>` stands for every request field). */
export const LOG_VARIABLE_NAMES: readonly string[] = [...Object.keys(VARIABLES), "http_<field>"];

/** The variable `name` (lower-case), or why a template may not use it. */
export function logVariable(name: string): LogVariable | { readonly error: string } {
  const known = VARIABLES[name];
  if (known !== undefined && Object.hasOwn(VARIABLES, name)) return known;
  if (name.startsWith("http_") && name.length > 5) {
    const field = name.slice(5).replaceAll("_", "-");
    return { read: (r) => r.request?.header(field) ?? undefined, field };
  }
  const why = Object.hasOwn(NOT_FILLED, name) ? NOT_FILLED[name] : undefined;
  if (why !== undefined) return { error: `$${name} is not available: ${why}` };
  if (name.startsWith("sent_http_") || name.startsWith("upstream_http_"))
    return { error: `$${name} is not available: response header fields are not kept for the log` };
  return { error: `unknown variable $${name} (known: ${LOG_VARIABLE_NAMES.map((n) => `$${n}`).join(", ")})` };
}
