/**
 * ingress-nginx canaries. An Ingress with `canary: "true"` serves no routes of its own: each of its rule
 * paths joins the main Ingress's route with the same host, path type and path (whichever Ingress is
 * older), as an alternative backend chosen per request, in ingress-nginx's precedence:
 * 1. `canary-by-header: NAME`: the header `always` → canary, `never` → main; with
 *    `canary-by-header-value: V` the header equal to V → canary (and `never` means nothing); with
 *    `canary-by-header-pattern: P` (when no value is set) the header matching P anywhere → canary;
 *    any other value falls through;
 * 2. `canary-by-cookie: NAME`: the cookie `always` → canary, `never` → main, else falls through;
 * 3. `canary-weight: W` of `canary-weight-total: T` (default 100) of the rest → canary, at random.
 * The routes for 1 and 2 are put just before the main route (routes are tried in list order); the main
 * route carries the weighted split. They are the main route's copies with another backend, under the
 * main Ingress's name, so they inherit its annotations and fail closed with it, as ingress-nginx's
 * canaries inherit the main Ingress's settings. A canary Ingress asking for an access control Gatehouse
 * does not enforce makes its canary routes fail closed too (never open; ingress-nginx would ignore it).
 * Patterns run on the linear-time engine; ingress-nginx searches them anywhere in the value (PCRE,
 * unanchored), so they are wrapped to match a substring.
 */
import type {
  Backend,
  HeaderMatch,
  Problem,
  Route,
  RouteAction,
  SourceRef,
  VirtualHost,
} from "../../model/index.ts";
import type { Ingress } from "../../sources/schema/networking.ts";
import { ingressCanaryRouteName } from "../common/names.ts";
import { annotationOf } from "../common/objects.ts";
import { problem } from "../common/problems.ts";
import type { SnapshotIndex } from "../common/snapshot-index.ts";
import { compareStrings } from "../common/sort.ts";
import { regexProblem } from "../gateway/regex-safety.ts";
import { NGINX_PREFIX } from "./annotations/nginx-annotations.ts";
import { goBool } from "./annotations/route-edits.ts";
import type { IngressTranslation } from "./ingress.ts";
import { type BuiltHosts, buildVirtualHosts } from "./virtual-hosts.ts";

export interface CanarySettings {
  readonly header?: { readonly name: string; readonly value?: string; readonly pattern?: string };
  readonly cookie?: string;
  readonly weight: number;
  readonly total: number;
}

/** HTTP field names and cookie names: RFC 9110 tokens. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function isCanary(ingress: Ingress): boolean {
  return goBool(annotationOf(ingress, `${NGINX_PREFIX}canary`) ?? "") === true;
}

/** The canary settings of a canary Ingress; a bad value is reported and left out. */
export function readCanary(
  ingress: Ingress,
  ref: SourceRef,
): { settings: CanarySettings; problems: Problem[] } {
  const problems: Problem[] = [];
  const raw = (name: string) => annotationOf(ingress, NGINX_PREFIX + name);
  const bad = (name: string, value: string, why: string): undefined => {
    const message = `annotation ${NGINX_PREFIX}${name} ${JSON.stringify(value)}: ${why}; not applied`;
    problems.push(problem(ref, "InvalidAnnotation", message));
    return undefined;
  };
  const whole = (name: string, fallback: number): number => {
    const v = raw(name);
    if (v === undefined) return fallback;
    if (!/^\s*[0-9]{1,9}\s*$/.test(v)) return bad(name, v, "must be a whole number") ?? fallback;
    return Number(v);
  };
  const token = (name: string): string | undefined => {
    const v = raw(name)?.trim();
    if (v === undefined || v === "") return undefined;
    return TOKEN.test(v)
      ? v
      : bad(name, v, "must be a header or cookie name (letters, digits, !#$%&'*+-.^_`|~)");
  };
  let total = whole("canary-weight-total", 100);
  if (total < 1)
    total = bad("canary-weight-total", String(raw("canary-weight-total")), "must be at least 1") ?? 100;
  let weight = whole("canary-weight", 0);
  if (weight > total) {
    const message = `annotation ${NGINX_PREFIX}canary-weight "${weight}": above canary-weight-total ${total}, so the canary takes every request (as in ingress-nginx)`;
    problems.push(problem(ref, "InvalidAnnotation", message, "warning"));
    weight = total;
  }
  const headerName = token("canary-by-header");
  let header: CanarySettings["header"];
  if (headerName !== undefined) {
    const value = raw("canary-by-header-value");
    const pattern = raw("canary-by-header-pattern");
    if (value !== undefined && value !== "") header = { name: headerName.toLowerCase(), value };
    else if (pattern !== undefined && pattern !== "") {
      const why = regexProblem(anywhere(pattern));
      // A refused pattern drops the header rule: reading the header as always/never would be a guess.
      if (why !== undefined) bad("canary-by-header-pattern", pattern, why);
      else header = { name: headerName.toLowerCase(), pattern };
    } else header = { name: headerName.toLowerCase() };
  }
  const cookie = token("canary-by-cookie");
  return {
    settings: { weight, total, ...(header ? { header } : {}), ...(cookie ? { cookie } : {}) },
    problems,
  };
}

/** A canary Ingress's own route annotations (timeouts, redirects, …) give way to its main Ingress's. */
export function canaryEditsIgnored(ref: SourceRef): Problem {
  const message =
    "this canary Ingress's route annotations are not applied: its paths take the main Ingress's (as in ingress-nginx)";
  return problem(ref, "CanaryAnnotationIgnored", message, "warning");
}

/** ingress-nginx matches a header pattern anywhere in the value; our engine matches whole values. */
function anywhere(pattern: string): string {
  return `[\\s\\S]*(?:${pattern})[\\s\\S]*`;
}

/** A cookie `name=value` among the request's cookies (joined by `;`, or `,` where a client split them). */
function cookieIs(name: string, value: string): HeaderMatch {
  const escaped = name.replace(/[$*+.^|]/g, (c) => `\\${c}`);
  return {
    type: "RegularExpression",
    name: "cookie",
    value: `(?:[\\s\\S]*[;,])?[ \\t]*${escaped}=${value}(?:[;,][\\s\\S]*)?`,
  };
}

/** One canary to place: its routes (built like any Ingress's, to find their backend) and settings. */
export interface CanaryIngress {
  readonly ref: SourceRef;
  readonly settings: CanarySettings;
  /** The canary Ingress's routes, by virtual host (from buildVirtualHosts). */
  readonly virtualHosts: readonly VirtualHost[];
}

export interface PlacedCanaries {
  readonly virtualHosts: VirtualHost[];
  /** Route name → the canary Ingress (`namespace/name`) that added it (fail closed with it too). */
  readonly addedBy: ReadonlyMap<string, string>;
  /** Main route name → the canary that split it and the action it had before (to undo the split). */
  readonly split: ReadonlyMap<string, { readonly by: string; readonly unsplit: RouteAction }>;
  readonly problems: Problem[];
}

/** Joins each canary's paths to the main routes they match. */
export function placeCanaries(
  virtualHosts: readonly VirtualHost[],
  canaries: readonly CanaryIngress[],
): PlacedCanaries {
  const problems: Problem[] = [];
  const addedBy = new Map<string, string>();
  const split = new Map<string, { by: string; unsplit: RouteAction }>();
  const hosts = virtualHosts.map((vh) => ({ ...vh, routes: [...vh.routes] }));
  const joined = new Set<string>();
  for (const canary of canaries) {
    const key = `${canary.ref.namespace}/${canary.ref.name}`;
    for (const cvh of canary.virtualHosts) {
      const vh = hosts.find((h) => h.hostname === cvh.hostname && h.match === cvh.match);
      for (const cr of cvh.routes) {
        const at = vh?.routes.findIndex((r) => isMainFor(r, cr)) ?? -1;
        const main = at >= 0 ? vh?.routes[at] : undefined;
        const what = `host ${cvh.hostname} ${cr.match.path.type} path "${cr.match.path.value}"`;
        if (vh === undefined || main === undefined || main.action.kind !== "Forward") {
          const msg = `canary for ${what}: no main Ingress serves it, so the canary path is not served`;
          problems.push(problem(canary.ref, "CanaryWithoutMain", msg, "warning"));
          continue;
        }
        if (joined.has(main.name)) {
          const msg = `canary for ${what}: that route already has a canary; this one is not served`;
          problems.push(problem(canary.ref, "CanaryConflict", msg, "warning"));
          continue;
        }
        joined.add(main.name);
        const canaryBackend = cr.action.kind === "Forward" ? cr.action.backends[0]?.backendId : undefined;
        if (canaryBackend === undefined) continue;
        const routes = canaryRoutes(main, canaryBackend, canary.settings);
        for (const r of routes) if (r.name !== main.name) addedBy.set(r.name, key);
        split.set(main.name, { by: key, unsplit: main.action });
        vh.routes.splice(at, 1, ...routes);
      }
    }
  }
  return { virtualHosts: hosts, addedBy, split, problems };
}

/** A main Ingress's rule route for the same path (a default backend is never a canary's main). */
function isMainFor(main: Route, canary: Route): boolean {
  return (
    main.source.kind === "Ingress" &&
    !main.name.endsWith("/default-backend") &&
    main.match.path.type === canary.match.path.type &&
    main.match.path.value === canary.match.path.value &&
    main.match.headers.length === 0
  );
}

function canaryRoutes(main: Route, backendId: string, s: CanarySettings): Route[] {
  const to = (id: string): Route["action"] => ({
    kind: "Forward",
    backends: [{ backendId: id, weight: 1, filters: [] }],
  });
  const mainId =
    main.action.kind === "Forward" ? (main.action.backends[0]?.backendId ?? backendId) : backendId;
  const when = (how: string, header: HeaderMatch, id: string): Route => ({
    ...main,
    name: ingressCanaryRouteName(main.name, how),
    match: { ...main.match, headers: [header] },
    action: to(id),
  });
  const out: Route[] = [];
  if (s.header !== undefined) {
    const h = s.header;
    if (h.value !== undefined)
      out.push(when("header", { type: "Exact", name: h.name, value: h.value }, backendId));
    else if (h.pattern !== undefined)
      out.push(
        when("header", { type: "RegularExpression", name: h.name, value: anywhere(h.pattern) }, backendId),
      );
    else {
      out.push(when("header", { type: "Exact", name: h.name, value: "always" }, backendId));
      out.push(when("header-never", { type: "Exact", name: h.name, value: "never" }, mainId));
    }
  }
  if (s.cookie !== undefined) {
    out.push(when("cookie", cookieIs(s.cookie, "always"), backendId));
    out.push(when("cookie-never", cookieIs(s.cookie, "never"), mainId));
  }
  const split: Route["action"] =
    s.weight === 0
      ? main.action
      : s.weight >= s.total
        ? to(backendId)
        : {
            kind: "Forward",
            backends: [
              { backendId: mainId, weight: s.total - s.weight, filters: [] },
              { backendId, weight: s.weight, filters: [] },
            ],
          };
  out.push({ ...main, action: split });
  return out;
}

/**
 * The main Ingresses' virtual hosts with every canary joined: each canary Ingress's paths built like any
 * Ingress's (to resolve its backend), then placed. Backends gain the canaries' that were placed.
 */
export function joinCanaries(
  main: BuiltHosts,
  canaries: readonly { readonly ingress: Ingress; readonly t: IngressTranslation }[],
  index: SnapshotIndex,
): PlacedCanaries & { readonly backends: Record<string, Backend> } {
  const problems: Problem[] = [];
  const inputs: CanaryIngress[] = [];
  const canaryBackends: Record<string, Backend> = {};
  const sorted = [...canaries].sort(
    (a, b) =>
      compareStrings(a.t.ref.namespace, b.t.ref.namespace) || compareStrings(a.t.ref.name, b.t.ref.name),
  );
  for (const { ingress, t } of sorted) {
    const read = readCanary(ingress, t.ref);
    problems.push(...read.problems);
    if (t.defaultBackend !== undefined)
      problems.push(
        problem(
          t.ref,
          "CanaryDefaultBackend",
          "spec.defaultBackend of a canary Ingress is not served",
          "warning",
        ),
      );
    const built = buildVirtualHosts(t.routes, index);
    problems.push(...built.problems);
    Object.assign(canaryBackends, built.backends);
    inputs.push({ ref: t.ref, settings: read.settings, virtualHosts: built.virtualHosts });
  }
  const placed = placeCanaries(main.virtualHosts, inputs);
  const used = new Set(
    placed.virtualHosts.flatMap((vh) =>
      vh.routes.flatMap((r) =>
        r.action.kind === "Forward" ? r.action.backends.map((b) => b.backendId) : [],
      ),
    ),
  );
  const backends: Record<string, Backend> = { ...main.backends };
  for (const [id, b] of Object.entries(canaryBackends)) if (used.has(id)) backends[id] = b;
  const sortedBackends: Record<string, Backend> = {};
  for (const id of Object.keys(backends).sort(compareStrings)) sortedBackends[id] = backends[id] as Backend;
  return {
    ...placed,
    problems: [...main.problems, ...problems, ...placed.problems],
    backends: sortedBackends,
  };
}

/**
 * Never open: the routes a failing-closed canary Ingress added answer as it does, and its weighted share
 * goes back to the main backend (a main route that fails closed itself keeps its own answer).
 */
export function closeCanaryRoutes(
  virtualHosts: readonly VirtualHost[],
  placed: Pick<PlacedCanaries, "addedBy" | "split">,
  closed: ReadonlyMap<string, RouteAction>,
): VirtualHost[] {
  if (placed.addedBy.size === 0 || closed.size === 0) return [...virtualHosts];
  return virtualHosts.map((vh) => ({
    ...vh,
    routes: vh.routes.map((r) => {
      const by = placed.addedBy.get(r.name);
      const action = by === undefined ? undefined : closed.get(by);
      if (action !== undefined) return { ...r, action };
      const s = placed.split.get(r.name);
      if (s === undefined || !closed.has(s.by) || r.action.kind !== "Forward") return r;
      return { ...r, action: s.unsplit };
    }),
  }));
}

/** A canary Ingress asking for access controls of its own, which its canary routes cannot carry. */
export function canaryGuardsProblem(ref: SourceRef, guards: readonly string[]): Problem {
  const message = `this canary Ingress asks for access controls of its own (${guards.join(", ")}); its canary routes take the main Ingress's (as in ingress-nginx), so they answer 403 and its weighted share goes to the main backend`;
  return problem(ref, "CanaryGuardsNotApplied", message);
}
