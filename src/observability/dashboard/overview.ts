/**
 * What the dashboard shows of the configuration, as JSON (`/api/overview`). Every field is copied by
 * name from the model: nothing is spread, so a secret added to the model later (a key, a password hash,
 * a client secret) cannot reach the page by accident. Certificates appear as their source Secret, names
 * and expiry only; authentication as the policy and the kinds of credential it checks.
 */
import type { GatewayModel, Problem, RedirectAction, Route, SourceRef } from "../../model/index.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { certificateExpiry } from "../metrics.ts";

export interface Overview {
  /** Unix milliseconds when this view was made. */
  readonly generatedAt: number;
  readonly listeners: readonly ListenerView[];
  readonly routes: readonly RouteView[];
  readonly backends: readonly BackendView[];
  readonly policies: readonly PolicyView[];
  readonly problems: readonly Problem[];
}

export interface ListenerView {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  readonly protocol: string;
  readonly hostname?: string;
  readonly source: SourceRef;
  readonly certificates: readonly {
    readonly source: SourceRef;
    readonly hostnames: readonly string[];
    /** notAfter in Unix seconds; null when the certificate does not parse. */
    readonly notAfter: number | null;
    /** The gateway's default certificate (offered when no other name matches). */
    readonly isDefault: boolean;
  }[];
}

export interface RouteView {
  readonly name: string;
  readonly listener: string;
  /** The virtual host's name (`*` for any host) and how it matches. */
  readonly host: string;
  readonly hostMatch: string;
  readonly source: SourceRef;
  /** `Prefix /api`, `Exact /`, `RegularExpression ^/v[0-9]+`. */
  readonly path: string;
  readonly method?: string;
  /** Header and query conditions, as `name type value` strings. */
  readonly conditions: readonly string[];
  /** `forward`, `redirect 301 https://…`, `respond 500`. */
  readonly action: string;
  readonly backends: readonly {
    readonly id: string;
    readonly weight: number;
    readonly failStatus?: number;
  }[];
  readonly filters: readonly string[];
  /** Policies attached to the route (`AuthPolicy ns/name`, `RateLimitPolicy ns/name`). */
  readonly policies: readonly string[];
}

export interface BackendView {
  readonly id: string;
  readonly protocol: string;
  readonly endpoints: readonly { readonly address: string; readonly port: number; readonly pod?: string }[];
  /** Why it cannot serve (requests get 503), or null when it can. */
  readonly problem: string | null;
}

export interface PolicyView {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** Route names the policy applies to. */
  readonly routes: readonly string[];
  /** Its status conditions as computed, `type=status (reason)`. */
  readonly conditions: readonly string[];
  /** What the policy does, without any credential: `jwt`, `basic`, `rate limit 100/60s`, … */
  readonly summary: string;
}

const refName = (r: SourceRef) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;

export function overviewOf(
  model: GatewayModel | undefined,
  problems: readonly Problem[],
  statuses: readonly ObjectStatus[],
  now = Date.now(),
): Overview {
  const listeners: ListenerView[] = [];
  const routes: RouteView[] = [];
  const policies = new Map<string, { ref: SourceRef; routes: Set<string>; summary: string }>();
  for (const l of model?.listeners ?? []) {
    const tls = l.tls;
    const certs = [
      ...(tls?.certificates ?? []).map((c) => ({ c, isDefault: false })),
      ...(tls?.defaultCertificate ? [{ c: tls.defaultCertificate, isDefault: true }] : []),
    ];
    listeners.push({
      name: l.name,
      address: l.address,
      port: l.port,
      protocol: l.protocol,
      ...(l.hostname !== undefined ? { hostname: l.hostname } : {}),
      source: ref(l.source),
      certificates: certs.map(({ c, isDefault }) => ({
        source: ref(c.source),
        hostnames: [...c.hostnames],
        notAfter: certificateExpiry(c.certPem) ?? null,
        isDefault,
      })),
    });
    for (const v of l.virtualHosts)
      for (const r of v.routes) {
        routes.push(routeView(r, l.name, v.hostname, v.match));
        for (const [p, summary] of routePolicies(r)) {
          const key = refName(p);
          const entry = policies.get(key) ?? { ref: ref(p), routes: new Set<string>(), summary };
          entry.routes.add(r.name);
          policies.set(key, entry);
        }
      }
  }
  for (const l of model?.passthroughListeners ?? [])
    listeners.push({
      name: l.name,
      address: l.address,
      port: l.port,
      protocol: "TLS passthrough",
      ...(l.hostname !== undefined ? { hostname: l.hostname } : {}),
      source: ref(l.source),
      certificates: [],
    });
  // Policies that attach to nothing still have a status worth seeing (e.g. a target that does not exist).
  for (const s of statuses)
    if (s.target.kind.endsWith("Policy")) {
      const key = refName(s.target);
      if (!policies.has(key)) policies.set(key, { ref: ref(s.target), routes: new Set(), summary: "" });
    }
  return {
    generatedAt: now,
    listeners,
    routes,
    backends: Object.values(model?.backends ?? {}).map((b) => ({
      id: b.id,
      protocol: b.protocol,
      endpoints: b.endpoints.map((e) => ({
        address: e.address,
        port: e.port,
        ...(e.pod !== undefined ? { pod: e.pod } : {}),
      })),
      problem: b.problem ?? (b.endpoints.length === 0 ? "NoReadyEndpoints" : null),
    })),
    policies: [...policies.values()]
      .map(({ ref: p, routes: attached, summary }) => ({
        kind: p.kind,
        namespace: p.namespace,
        name: p.name,
        routes: [...attached].sort(),
        conditions: conditionsOf(statuses, p),
        summary,
      }))
      .sort((a, b) => refName(a).localeCompare(refName(b))),
    problems: problems.map((p) => ({
      object: ref(p.object),
      reason: p.reason,
      message: p.message,
      severity: p.severity,
    })),
  };
}

function ref(r: SourceRef): SourceRef {
  return { kind: r.kind, namespace: r.namespace, name: r.name };
}

function routeView(r: Route, listener: string, host: string, hostMatch: string): RouteView {
  const m = r.match;
  const a = r.action;
  return {
    name: r.name,
    listener,
    host,
    hostMatch,
    source: ref(r.source),
    path: `${m.path.type} ${m.path.value}${m.path.ignoreCase ? " (any case)" : ""}`,
    ...(m.method !== undefined ? { method: m.method } : {}),
    conditions: [
      ...m.headers.map((h) => `header ${h.name} ${h.type} ${h.value}`),
      ...m.queryParams.map((q) => `query ${q.name} ${q.type} ${q.value}`),
    ],
    action:
      a.kind === "Forward" ? "forward" : a.kind === "Redirect" ? redirectSummary(a) : `respond ${a.status}`,
    backends:
      a.kind === "Forward"
        ? a.backends.map((b) => ({
            id: b.backendId,
            weight: b.weight,
            ...(b.failStatus !== undefined ? { failStatus: b.failStatus } : {}),
          }))
        : [],
    filters: r.filters.map((f) => f.kind),
    policies: routePolicies(r).map(([p]) => refName(p)),
  };
}

/** `redirect 308 to scheme https, port 8443`: the parts of the target the redirect sets. */
function redirectSummary(a: RedirectAction): string {
  if (a.location !== undefined) return `redirect ${a.statusCode} to ${a.location}`;
  const parts = [
    a.scheme !== undefined ? `scheme ${a.scheme}` : "",
    a.hostname !== undefined ? `host ${a.hostname}` : "",
    a.port !== undefined ? `port ${a.port}` : "",
    a.path !== undefined ? `path ${a.path.type}` : "",
  ].filter((p) => p !== "");
  return `redirect ${a.statusCode}${parts.length > 0 ? ` to ${parts.join(", ")}` : ""}`;
}

/** The policies a route carries, with a summary that names what is checked, never a credential. */
function routePolicies(r: Route): [SourceRef, string][] {
  const out: [SourceRef, string][] = [];
  const auth = r.auth;
  if (auth !== undefined) {
    const kinds = [
      auth.jwt && "jwt",
      auth.oidc && "oidc",
      auth.basic && "basic",
      auth.apiKeys && "api keys",
      auth.external && "external",
      r.ipAccess?.length ? "ip lists" : undefined,
    ].filter((k): k is string => typeof k === "string");
    out.push([auth.policy, auth.failClosed !== undefined ? "fails closed (401)" : kinds.join(", ")]);
  }
  const limit = r.rateLimit;
  if (limit !== undefined && limit.source.kind !== "Ingress")
    out.push([
      limit.source,
      limit.invalid !== undefined
        ? "invalid (500)"
        : `rate limit ${limit.rules.map((x) => `${x.limit}/${x.windowSeconds}s`).join(", ")}${limit.shadow ? " (shadow)" : ""}`,
    ]);
  return out;
}

function conditionsOf(statuses: readonly ObjectStatus[], p: SourceRef): string[] {
  const s = statuses.find(
    (x) => x.target.kind === p.kind && x.target.namespace === p.namespace && x.target.name === p.name,
  );
  const out: string[] = [];
  const collect = (list: unknown) => {
    if (!Array.isArray(list)) return;
    for (const c of list as { type?: unknown; status?: unknown; reason?: unknown }[])
      out.push(`${String(c.type)}=${String(c.status)} (${String(c.reason)})`);
  };
  collect(s?.status.conditions);
  // Policy statuses (GEP-713) put conditions under each ancestor.
  const ancestors = s?.status.ancestors;
  if (Array.isArray(ancestors))
    for (const a of ancestors) collect((a as { conditions?: unknown }).conditions);
  return [...new Set(out)];
}
