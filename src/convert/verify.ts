/**
 * The proof convert runs on itself: the input without its Ingresses, plus what convert wrote (policies of
 * the same name replaced), translated again; every host an Ingress served must then hold the same routes,
 * in the same order, with the same matches, actions, filters, limits and guards, the WAF among them (names and sources aside,
 * which say where a route came from, not what it does); an `ssl-passthrough` host must reach the same
 * backends. A host that differs is a finding.
 */
import type { GatewayModel, Listener, RedirectAction, Route } from "../model/index.ts";
import type { AuthPolicy } from "../sources/schema/auth-policy.ts";
import type { BackendTLSPolicy } from "../sources/schema/backend-tls-policy.ts";
import type { ConfigMap } from "../sources/schema/core.ts";
import type { Gateway, GatewayClass, HTTPRoute, ReferenceGrant } from "../sources/schema/gateway.ts";
import type { RateLimitPolicy, WAFPolicy } from "../sources/schema/policies.ts";
import type { HTTPRouteFilterObject } from "../sources/schema/route-filter.ts";
import type { TLSRoute } from "../sources/schema/tlsroute.ts";
import type { ResourceSnapshot } from "../sources/snapshot.ts";
import { canonical } from "../status/merge.ts";
import {
  DEFAULT_HTTP_LISTENER,
  DEFAULT_HTTPS_LISTENER,
  DEFAULT_PASSTHROUGH_LISTENER,
  gatewayListenerName,
} from "../translate/common/names.ts";
import { nameOf, namespaceOf } from "../translate/common/objects.ts";
import { type TranslateOptions, translate } from "../translate/translate.ts";
import type { Findings } from "./findings.ts";
import type { GatewayPlan } from "./gateway.ts";
import { CONVERTED_GATEWAY_CLASS } from "./names.ts";

type Json = Record<string, unknown>;

const EVERY_ADDRESS = ["0.0.0.0/0", "::/0"];

export function verifyConversion(
  snapshot: ResourceSnapshot,
  options: Partial<TranslateOptions>,
  model: GatewayModel,
  objects: readonly Json[],
  plan: GatewayPlan,
  findings: Findings,
  passthroughSections: ReadonlyMap<string, string>,
): { hosts: number; same: number; skipped?: string } {
  const controller = options.gatewayController ?? "gatehouse.dev/gateway-controller";
  const after = snapshotAfter(snapshot, objects, controller);
  if (!after.gateways.some((g) => namespaceOf(g) === plan.ref.namespace && nameOf(g) === plan.ref.name))
    return {
      hosts: 0,
      same: 0,
      skipped: `Gateway ${plan.ref.namespace}/${plan.ref.name} is not in the input`,
    };
  const converted = translate(after, options).model;
  let hosts = 0;
  let same = 0;
  for (const listener of model.listeners) {
    if (listener.name !== DEFAULT_HTTP_LISTENER && listener.name !== DEFAULT_HTTPS_LISTENER) continue;
    for (const vh of listener.virtualHosts) {
      const before = vh.routes.filter((r) => r.source.kind === "Ingress");
      if (before.length === 0) continue;
      const section = plan.sectionFor(listener, vh.hostname);
      if (section === undefined) continue; // reported by httproutes.ts
      hosts++;
      const name = gatewayListenerName(plan.ref.namespace, plan.ref.name, section);
      const target = converted.listeners.find((l) => l.name === name);
      const now = target?.virtualHosts.find((v) => v.hostname === vh.hostname)?.routes ?? [];
      const difference =
        firstDifference(before, now, model.backends, converted.backends) ??
        certificateDifference(listener, target, vh.hostname);
      if (difference === undefined) {
        same++;
        continue;
      }
      for (const ingress of uniqueSources(before))
        findings.add(
          ingress,
          `host ${vh.hostname} on ${listener.protocol} port ${listener.port}: the converted objects serve it differently: ${difference}`,
        );
    }
  }
  for (const listener of model.passthroughListeners ?? []) {
    if (listener.name !== DEFAULT_PASSTHROUGH_LISTENER) continue;
    for (const route of listener.routes) {
      if (route.source.kind !== "Ingress") continue;
      for (const { hostname } of route.hostnames) {
        const section = passthroughSections.get(hostname);
        if (section === undefined) continue; // reported by passthrough.ts
        hosts++;
        const name = gatewayListenerName(plan.ref.namespace, plan.ref.name, section);
        const now = converted.passthroughListeners
          ?.find((l) => l.name === name)
          ?.routes.find((r) => r.hostnames.some((h) => h.hostname === hostname));
        if (canonical(now?.backends) === canonical(route.backends)) same++;
        else
          findings.add(
            route.source,
            `ssl-passthrough host ${hostname}: the converted objects send it to ${shown(now?.backends)}, not ${shown(route.backends)}`,
          );
      }
    }
  }
  return { hosts, same };
}

/** Whether the host is offered another certificate than the Ingress listener offered it; undefined: the same. */
function certificateDifference(
  before: Listener,
  now: Listener | undefined,
  host: string,
): string | undefined {
  if (before.protocol !== "HTTPS") return undefined;
  const offered = (l: Listener | undefined) => {
    const certs = l?.tls?.certificates ?? [];
    const own = certs.find((c) =>
      c.hostnames.some((h) => h === host || (h.startsWith("*.") && host.endsWith(h.slice(1)))),
    );
    const c = own ?? certs[0];
    return c ? `Secret ${c.source.namespace}/${c.source.name}` : "no certificate";
  };
  const [was, is] = [offered(before), offered(now)];
  return was === is ? undefined : `it is offered the certificate of ${is}, not ${was}`;
}

function uniqueSources(routes: readonly Route[]) {
  const seen = new Map<string, Route["source"]>();
  for (const r of routes) seen.set(`${r.source.namespace}/${r.source.name}`, r.source);
  return [...seen.values()];
}

/**
 * Where two route lists first differ, in words; undefined when they do the same: the same routes, and
 * the same order between any two routes one request could match (the order of routes that can never
 * match the same request, such as `/aaa` and `/ccc`, is no behaviour).
 */
function firstDifference(
  before: readonly Route[],
  now: readonly Route[],
  beforeBackends: GatewayModel["backends"],
  nowBackends: GatewayModel["backends"],
): string | undefined {
  // Key order is not behaviour: the two APIs' translators build the same values in different orders.
  const keys = now.map((r) => canonical(behaviour(r, nowBackends)));
  const position: number[] = [];
  for (const [i, b] of before.entries()) {
    const k = canonical(behaviour(b, beforeBackends));
    const j = keys.findIndex((key, n) => key === k && !position.includes(n));
    if (j >= 0) {
      position.push(j);
      continue;
    }
    const path = (r: Route) => `${r.match.path.type} ${r.match.path.value}`;
    const same = now.find((n, x) => !position.includes(x) && path(n) === path(b));
    if (same === undefined)
      return `route ${i + 1} (${describe(b)}) is served by no converted route of that path`;
    const nb = behaviour(b, beforeBackends);
    const nn = behaviour(same, nowBackends);
    const [where, was, is] = deepestDifference(nb, nn, "");
    return `route ${i + 1} (${describe(b)}) differs in ${where}: ${shown(was)} became ${shown(is)}`;
  }
  if (now.length > before.length)
    return `${now.length - before.length} more route(s) are served, e.g. ${describe(now.find((_, x) => !position.includes(x)) as Route)}`;
  for (let i = 0; i < before.length; i++)
    for (let j = i + 1; j < before.length; j++)
      if (
        (position[i] as number) > (position[j] as number) &&
        mayOverlap(before[i] as Route, before[j] as Route)
      )
        return `${describe(before[j] as Route)} now comes before ${describe(before[i] as Route)}`;
  return undefined;
}

/**
 * The deepest field where two values differ (`action.backends[0].backend.tls`), so a finding shows what
 * changed rather than a whole action cut at 160 characters.
 */
function deepestDifference(a: unknown, b: unknown, path: string): [string, unknown, unknown] {
  const bothArrays = Array.isArray(a) && Array.isArray(b) && a.length === b.length;
  const bothObjects =
    !Array.isArray(a) && !Array.isArray(b) && typeof a === "object" && typeof b === "object" && a && b;
  if (!bothArrays && !bothObjects) return [path, a, b];
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const key = [...new Set([...Object.keys(x), ...Object.keys(y)])].find(
    (k) => canonical(x[k]) !== canonical(y[k]),
  );
  if (key === undefined) return [path, a, b];
  const next = bothArrays ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`;
  return deepestDifference(x[key], y[key], next);
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? "nothing";
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/** Whether one request could match both routes' paths (regular expressions: assumed so). */
function mayOverlap(a: Route, b: Route): boolean {
  const pa = a.match.path;
  const pb = b.match.path;
  if (pa.type === "RegularExpression" || pb.type === "RegularExpression") return true;
  const within = (path: string, prefix: string) =>
    prefix === "/" || path === prefix || path.startsWith(`${prefix}/`);
  if (pa.type === "Exact" && pb.type === "Exact") return pa.value === pb.value;
  if (pa.type === "Prefix" && pb.type === "Prefix")
    return within(pa.value, pb.value) || within(pb.value, pa.value);
  return pa.type === "Exact" ? within(pa.value, pb.value) : within(pb.value, pa.value);
}

function describe(r: Route): string {
  const m = r.match;
  const extra = [
    m.method,
    ...m.headers.map((h) => `header ${h.name}`),
    ...m.queryParams.map((q) => `query ${q.name}`),
  ];
  return `${m.path.type} ${m.path.value}${extra.filter(Boolean).length > 0 ? ` with ${extra.filter(Boolean).join(", ")}` : ""}`;
}

/** What a route does, without what names its origin. */
function behaviour(r: Route, backends: GatewayModel["backends"]): Json {
  const { name: _n, source: _s, ruleName: _r, auth, ipAccess, rateLimit, waf, filters, ...rest } = r;
  return {
    ...rest,
    action: r.action.kind === "Redirect" ? literalLocation(r.action) : spokenTo(r.action, backends),
    // A redirect forwards nothing: a rewrite of what would be forwarded does nothing beside it.
    filters: r.action.kind === "Redirect" ? filters.filter((f) => f.kind !== "URLRewrite") : filters,
    // A policy that fails closed answers 401 whatever else it says, and why is not behaviour.
    ...(auth
      ? { auth: auth.failClosed !== undefined ? { failClosed: true } : { ...auth, policy: undefined } }
      : {}),
    // A list that could not be read refuses every address, as a deny list of every address does.
    ...(ipAccess
      ? {
          ipAccess: ipAccess.map(({ source: _x, ...l }) =>
            l.invalid !== undefined ? { allow: [], deny: EVERY_ADDRESS } : l,
          ),
        }
      : {}),
    ...(rateLimit
      ? { rateLimit: { ...rateLimit, source: undefined, policy: undefined, bucket: undefined } }
      : {}),
    // A WAF that cannot run answers 503 whatever else it says; which object asked for it is not behaviour.
    ...(waf
      ? {
          waf:
            waf.invalid !== undefined ? { invalid: true } : { ...waf, source: undefined, policy: undefined },
        }
      : {}),
  };
}

/**
 * A Forward's backends by what they are, not by id: an Ingress's own variant of a Service port
 * (`backend-protocol`: `…/h2c`, `…/tls/ingress/…`) and what the converted objects make of that port
 * (appProtocol, a BackendTLSPolicy) have different ids and may do the same, or differ in the protocol or
 * the TLS spoken (which object asked for the TLS is not behaviour).
 */
function spokenTo(a: Route["action"], backends: GatewayModel["backends"]): Json {
  if (a.kind !== "Forward") return a as unknown as Json;
  return {
    ...a,
    backends: a.backends.map((wb) => {
      const b = backends[wb.backendId];
      if (b === undefined) return wb;
      const { source: _source, ...tls } = b.tls ?? { source: undefined };
      const { backendId: _id, ...rest } = wb;
      return {
        ...rest,
        backend: {
          service: b.service,
          protocol: b.protocol,
          clusterIP: wb.backendId.endsWith("@cluster-ip"),
          ...(b.tls !== undefined ? { tls } : {}),
          ...(b.problem !== undefined ? { problem: b.problem } : {}),
        },
      };
    }),
  };
}

/**
 * A Location `<scheme>://<host>[:port]$request_uri` with a literal scheme and host says what a redirect of
 * that scheme, host and port says (the request's path and query after them, the port left out when it is
 * the scheme's own): compared in that form, so the RequestRedirect convert writes for it is the same.
 */
function literalLocation(a: RedirectAction): RedirectAction {
  const m =
    a.location === undefined
      ? null
      : /^(https?):\/\/([a-z0-9.-]+)(?::([0-9]{1,5}))?\$request_uri$/i.exec(a.location);
  if (m === null) return a;
  const scheme = (m[1] as string).toLowerCase() as "http" | "https";
  const port = m[3] !== undefined ? Number(m[3]) : undefined;
  return {
    kind: "Redirect",
    scheme,
    hostname: (m[2] as string).toLowerCase(),
    ...(port !== undefined && port !== (scheme === "https" ? 443 : 80) ? { port } : {}),
    statusCode: a.statusCode,
  };
}

/** The snapshot as it is once the output is applied and the Ingresses are gone. */
export function snapshotAfter(
  snapshot: ResourceSnapshot,
  objects: readonly Json[],
  controller: string,
): ResourceSnapshot {
  const of = <T>(kind: string) => objects.filter((o) => o.kind === kind) as unknown as T[];
  const key = (o: { metadata?: { name?: string; namespace?: string } }) => `${namespaceOf(o)}/${nameOf(o)}`;
  const replaced = <T extends { metadata?: { name?: string; namespace?: string } }>(
    old: readonly T[],
    added: T[],
  ) => {
    const names = new Set(added.map(key));
    return [...old.filter((o) => !names.has(key(o))), ...added];
  };
  const classes = snapshot.gatewayClasses.some((c) => nameOf(c) === CONVERTED_GATEWAY_CLASS)
    ? snapshot.gatewayClasses
    : [
        ...snapshot.gatewayClasses,
        {
          apiVersion: "gateway.networking.k8s.io/v1",
          kind: "GatewayClass",
          metadata: { name: CONVERTED_GATEWAY_CLASS },
          spec: { controllerName: controller },
        } as GatewayClass,
      ];
  return {
    ...snapshot,
    ingresses: [],
    gatewayClasses: classes,
    gateways: replaced(snapshot.gateways, of<Gateway>("Gateway")),
    httpRoutes: replaced(snapshot.httpRoutes, of<HTTPRoute>("HTTPRoute")),
    tlsRoutes: replaced(snapshot.tlsRoutes, of<TLSRoute>("TLSRoute")),
    referenceGrants: replaced(snapshot.referenceGrants, of<ReferenceGrant>("ReferenceGrant")),
    authPolicies: replaced(snapshot.authPolicies, of<AuthPolicy>("AuthPolicy")),
    rateLimitPolicies: replaced(snapshot.rateLimitPolicies, of<RateLimitPolicy>("RateLimitPolicy")),
    wafPolicies: replaced(snapshot.wafPolicies ?? [], of<WAFPolicy>("WAFPolicy")),
    httpRouteFilters: replaced(snapshot.httpRouteFilters, of<HTTPRouteFilterObject>("HTTPRouteFilter")),
    configMaps: replaced(snapshot.configMaps, of<ConfigMap>("ConfigMap")),
    backendTLSPolicies: replaced(snapshot.backendTLSPolicies ?? [], of<BackendTLSPolicy>("BackendTLSPolicy")),
  };
}
