/**
 * ingress-nginx's annotations on the request sent upstream and how it is sent (its parsers in
 * internal/ingress/annotations/{upstreamvhost,xforwardedprefix,log,serviceupstream,proxy}, what they
 * become in rootfs/etc/nginx/template/nginx.tmpl and controller/template/template.go):
 * - `upstream-vhost: H` → `proxy_set_header Host "H"`: the Host sent upstream (the client's stays in
 *   X-Forwarded-Host, which nginx sets from `$best_http_host`). nginx expands variables in H; the ones
 *   known when the configuration is written are expanded here, per backend: `$namespace`, `$ingress_name`,
 *   `$service_name`, `$service_port` (the linkerd docs' `$service_name.$namespace.svc.cluster.local:8084`).
 *   `$best_http_host` or `$http_host` alone is the client's Host, which is sent anyway; `$host` alone too,
 *   where nginx drops a port the client sent and lower-cases it (Gatehouse sends it as sent). Any other
 *   variable, or a value that is not a host with an optional port (a scheme, a path, spaces), is refused.
 * - `x-forwarded-prefix: P` → `proxy_set_header X-Forwarded-Prefix "P"`, which ingress-nginx writes only
 *   into a location with `rewrite-target` set to something other than the location's path (buildProxyPass):
 *   without it no header is sent, as there. Its validator allows `$1` captures of a regex path; those are
 *   not filled into the header here, so `$` is refused.
 * - `enable-access-log: "false"` → `access_log off` in those locations: the routes' requests are not
 *   access-logged (still counted in metrics). Booleans are read as Go's strconv.ParseBool reads them.
 * - `service-upstream: "true"`: the Service's cluster IP and port as the one endpoint instead of the pods
 *   (service-upstream.ts applies it: it needs the Services).
 * - `proxy-connect-timeout: N` → `proxy_connect_timeout Ns`: the route's connect limit (whole seconds, as
 *   strconv.Atoi reads them; 0 and negative values are refused here, where nginx would fail every connect).
 * - `proxy-body-size: S` → `client_max_body_size S`: the route's request body limit (model
 *   `requestBodyMaxBytes`; 413 past it). S is nginx's size: bytes, or a number with k, m or g (KiB, MiB,
 *   GiB, either case); 0 is no limit. A value ingress-nginx's validator refuses makes it fall back to its
 *   ConfigMap default, 1m: so does Gatehouse (reported, InvalidAnnotation), never to no limit. `8b`, which
 *   the validator takes and nginx refuses, and sizes past 2^53 − 1 bytes are refused alike. Gatehouse has
 *   no global default: a path without the annotation takes any size (docs/ingress.md).
 * An empty `upstream-vhost`, `x-forwarded-prefix` or `proxy-body-size` asks for nothing, as ingress-nginx's
 * string parser calls it missing.
 */

import { fieldValueProblem, parseHostAndPort } from "../../../model/http-syntax.ts";
import type { Filter, Route } from "../../../model/index.ts";
import { GATEHOUSE_PREFIX } from "../gatehouse-annotations.ts";
import { rewriteTargetOf } from "./regex-paths.ts";
import {
  type AnnotationFamily,
  type AnnotationReader,
  boolAnnotation,
  type RouteEdit,
  secondsAnnotation,
} from "./route-edits.ts";

/** nginx variables: `$name` or `${name}` (a `$` followed by neither is refused as an unknown variable). */
const VARIABLE = /\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))?/g;
/** Known when the configuration is written (nginx.tmpl `set $namespace …` in each location). */
const KNOWN_VARIABLES = ["namespace", "ingress_name", "service_name", "service_port"] as const;
type KnownVariable = (typeof KNOWN_VARIABLES)[number];
/** The client's Host alone: what is sent when upstream-vhost is not set. */
const CLIENT_HOST = /^\$(?:host|http_host|best_http_host|\{(?:host|http_host|best_http_host)\})$/;
/** ingress-nginx's RegexPathWithCapture without `$`, and the spaces its validator removes first. */
const PREFIX_CHARS = /^[A-Za-z0-9\-._~/: ]*$/;

export const upstreamRequestFamily: AnnotationFamily = {
  names: [
    "upstream-vhost",
    "x-forwarded-prefix",
    "enable-access-log",
    "service-upstream",
    "proxy-connect-timeout",
    "proxy-body-size",
  ],
  read(r): RouteEdit | undefined {
    const vhost = upstreamVhost(r);
    const prefix = forwardedPrefix(r);
    const accessLog = boolAnnotation(r, "enable-access-log");
    const logShare = accessLogShare(r);
    const serviceUpstream = boolAnnotation(r, "service-upstream");
    const connect = secondsAnnotation(r, "proxy-connect-timeout", 1);
    const bodyMax = bodySize(r);
    const perRoute = [vhost, prefix].filter((f) => f !== undefined);
    const edit: RouteEdit = {
      ...(accessLog === false ? { accessLog: false as const } : {}),
      ...(logShare !== undefined ? { accessLogSample: logShare } : {}),
      ...(serviceUpstream === true ? { serviceUpstream: true as const } : {}),
      ...(connect !== undefined ? { timeouts: { connectMs: connect * 1000 } } : {}),
      ...(bodyMax !== undefined ? { requestBodyMaxBytes: bodyMax } : {}),
      ...(perRoute.length > 0
        ? { perRoute: (route: Route) => perRoute.reduce((out, f) => f(out), route) }
        : {}),
    };
    return Object.keys(edit).length === 0 ? undefined : edit;
  },
};

/** `gatehouse.dev/access-log-sample`: the share of the paths' requests logged, 0…1 (a decimal number). */
function accessLogShare(r: AnnotationReader): number | undefined {
  const name = `${GATEHOUSE_PREFIX}access-log-sample`;
  const raw = r.raw(name);
  if (raw === undefined) return undefined;
  const v = raw.trim();
  const share = /^(?:0|1|0?\.[0-9]{1,6}|1\.0{1,6})$/.test(v) ? Number(v) : Number.NaN;
  if (Number.isNaN(share))
    return r.bad(name, raw, "must be a decimal number from 0 to 1; the flag's share applies");
  return share;
}

// ---- proxy-body-size ----

/** nginx's size units (ngx_parse_offset): none, k, m, g, either case. */
const SIZE_UNITS: Readonly<Record<string, number>> = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };
const SIZE = /^([0-9]{1,16})([kmg]?)$/i;
/** ingress-nginx's `proxy-body-size` ConfigMap default: what a value it cannot read leaves in force. */
export const DEFAULT_BODY_SIZE = 1024 * 1024;

/**
 * An nginx size (`1024`, `8k`, `10M`, `1g`) in bytes; undefined when it is not one, or past 2^53 − 1 bytes
 * (no larger count is exact here; nginx's own ceiling is its off_t's).
 */
export function nginxSize(text: string): number | undefined {
  const m = SIZE.exec(text.trim());
  if (m === null) return undefined;
  const bytes = Number(m[1]) * (SIZE_UNITS[(m[2] as string).toLowerCase()] as number);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** The route's body limit in bytes; undefined: none (absent, empty or 0). */
function bodySize(r: AnnotationReader): number | undefined {
  const raw = r.raw("proxy-body-size");
  if (raw === undefined || raw.trim() === "") return undefined;
  const bytes = nginxSize(raw);
  if (bytes === undefined) {
    r.bad(
      "proxy-body-size",
      raw,
      "must be a size: a whole number of bytes, or one with k, m or g (0: no limit); ingress-nginx's default 1m limits these paths instead",
    );
    return DEFAULT_BODY_SIZE;
  }
  return bytes === 0 ? undefined : bytes;
}

// ---- upstream-vhost ----

/** The Host template's check; undefined: nothing to do (absent, empty, or the client's Host). */
function upstreamVhost(r: AnnotationReader): ((route: Route) => Route) | undefined {
  const raw = r.raw("upstream-vhost");
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (v === "" || CLIENT_HOST.test(v)) return undefined;
  const why = vhostProblem(v);
  if (why !== undefined) return r.bad("upstream-vhost", raw, why);
  return (route) => withBackendHosts(route, v);
}

function vhostProblem(v: string): string | undefined {
  if (/\s/.test(v)) return "a Host holds no spaces";
  if (v.includes("://")) return "a host name and optional port, not a URL (no scheme)";
  if (v.includes("/")) return "a host name and optional port, not a path";
  for (const m of v.matchAll(VARIABLE)) {
    const name = m[1] ?? m[2] ?? "";
    if (!(KNOWN_VARIABLES as readonly string[]).includes(name)) {
      const known = KNOWN_VARIABLES.map((k) => `$${k}`).join(", ");
      return `the nginx variable ${JSON.stringify(m[0])} is not supported (only ${known}, or $host, $http_host, $best_http_host alone)`;
    }
  }
  // Expanded values are DNS labels and port numbers: a sample of each stands for them.
  const sample = expand(v, { namespace: "ns", ingress_name: "ing", service_name: "svc", service_port: "80" });
  const host = parseHostAndPort(sample);
  if (host === undefined || Number(host.port ?? 0) > 65535)
    return "must be a host name or IP address, with an optional :port";
  return undefined;
}

function expand(template: string, values: Readonly<Record<KnownVariable, string>>): string {
  return template.replace(VARIABLE, (_all, braced?: string, bare?: string) => {
    const name = (braced ?? bare ?? "") as KnownVariable;
    return values[name] ?? "";
  });
}

/** Each Forward backend gets its own URLRewrite, since `$service_name` differs per backend (canaries). */
function withBackendHosts(route: Route, template: string): Route {
  const a = route.action;
  if (a.kind !== "Forward") return route;
  const backends = a.backends.map((b) => {
    const { service, port } = serviceOfBackendId(b.backendId);
    const hostname = expand(template, {
      namespace: route.source.namespace,
      ingress_name: route.source.name,
      service_name: service,
      service_port: port,
    });
    const rewrite: Filter = { kind: "URLRewrite", hostname };
    return { ...b, filters: [...b.filters, rewrite] };
  });
  return { ...route, action: { ...a, backends } };
}

/**
 * The Service name and port of a backend id, `<namespace>/<service>:<port>` (common/names.ts backendId;
 * the port is the Service port number once resolved, else as the Ingress named it). nginx's
 * `$service_port` is the port as the Ingress wrote it: a port given by name is its number here.
 */
function serviceOfBackendId(id: string): { service: string; port: string } {
  const base = id.split("@")[0] as string;
  const slash = base.indexOf("/");
  const colon = base.lastIndexOf(":");
  if (slash < 0 || colon < slash) return { service: "", port: "" };
  return { service: base.slice(slash + 1, colon), port: base.slice(colon + 1) };
}

// ---- x-forwarded-prefix ----

function forwardedPrefix(r: AnnotationReader): ((route: Route) => Route) | undefined {
  const raw = r.raw("x-forwarded-prefix");
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (v === "") return undefined;
  if (/[\r\n]/.test(v)) return r.bad("x-forwarded-prefix", raw, "a header value holds no CR or LF");
  if (v.includes("$"))
    return r.bad(
      "x-forwarded-prefix",
      raw,
      "regex captures ($1) and nginx variables are not filled into this header",
    );
  if (!PREFIX_CHARS.test(v) || fieldValueProblem(v) !== undefined)
    return r.bad("x-forwarded-prefix", raw, "may hold only letters, digits, spaces and - . _ ~ / :");
  const target = rewriteTargetOf(r.raw("rewrite-target"));
  if (target === undefined) return undefined;
  const header: Filter = {
    kind: "RequestHeaderModifier",
    edits: { set: [{ name: "x-forwarded-prefix", value: v }], add: [], remove: [] },
  };
  return (route) =>
    route.action.kind !== "Forward" || samePath(route, target)
      ? route
      : { ...route, filters: [...route.filters, header] };
}

/**
 * buildProxyPass sends no header where the rewrite target is the location's path as written; the route
 * keeps a Prefix path without its trailing slash, so either spelling counts.
 */
function samePath(route: Route, target: string): boolean {
  const p = route.match.path;
  return p.value === target || (p.type === "Prefix" && p.value !== "/" && `${p.value}/` === target);
}
