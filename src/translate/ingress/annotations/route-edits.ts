/**
 * The honoured ingress-nginx annotations of one Ingress as edits to each of its routes. Each family of
 * annotations reads its own keys (timeouts.ts, cors.ts, …) through an AnnotationReader, which turns a
 * bad value into an `InvalidAnnotation` error naming the annotation and the value; the family then
 * leaves that setting out and the rest of the Ingress is served (as ingress-nginx falls back to its
 * default for a value it cannot parse). The families are listed once, in families.ts; ingresses.ts
 * applies the result to every route the Ingress contributes.
 */
import type {
  Filter,
  Problem,
  ResponseBandwidth,
  RetryPolicy,
  Route,
  RouteAction,
  RouteTimeouts,
  SourceRef,
  VirtualHost,
} from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { annotationOf } from "../../common/objects.ts";
import { problem } from "../../common/problems.ts";
import { GATEHOUSE_PREFIX } from "../gatehouse-annotations.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";

/** What the annotations change on each route of the Ingress. */
export interface RouteEdit {
  /** Added after the route's own filters, in family order. */
  readonly filters?: readonly Filter[];
  /** Replaces a Forward action (a redirect annotation answers instead of the backend). */
  readonly action?: RouteAction;
  readonly timeouts?: RouteTimeouts;
  readonly retry?: RetryPolicy;
  /** `false`: the route's requests are not access-logged (ingress-nginx `enable-access-log`). */
  readonly accessLog?: false;
  /** The share of the route's requests access-logged (`gatehouse.dev/access-log-sample`, upstream-request.ts). */
  readonly accessLogSample?: number;
  /** Response bodies paced to this (response-bandwidth.ts). */
  readonly responseBandwidth?: ResponseBandwidth;
  /** Request bodies past this many bytes are refused (upstream-request.ts, `proxy-body-size`). */
  readonly requestBodyMaxBytes?: number;
  /** Forward to the Services' cluster IPs, not their endpoints (service-upstream.ts applies it). */
  readonly serviceUpstream?: true;
  /** What depends on the route itself (its path, its backends), applied last; later families' after. */
  readonly perRoute?: (route: Route) => Route;
}

/** One annotation's value, and the way to refuse it. */
export interface AnnotationReader {
  /**
   * The raw value of `nginx.ingress.kubernetes.io/<name>` (or of `name` itself when it is one of
   * Gatehouse's own, `gatehouse.dev/…`), or undefined when absent.
   */
  raw(name: string): string | undefined;
  /** Reports `value` of `name` as unusable (`why` completes "…: <why>") and returns undefined. */
  bad(name: string, value: string, why: string): undefined;
}

/** A family of annotations read together (the names are for the tests and docs, without prefix). */
export interface AnnotationFamily {
  readonly names: readonly string[];
  read(r: AnnotationReader): RouteEdit | undefined;
}

export interface IngressEdits {
  /** undefined: no honoured annotation asks for a change. */
  readonly edit?: RouteEdit;
  readonly problems: readonly Problem[];
}

/** Go's strconv.ParseBool, which ingress-nginx reads its boolean annotations with; undefined: neither. */
export function goBool(value: string): boolean | undefined {
  const v = value.trim();
  if (v === "1" || v === "t" || v === "T" || v === "true" || v === "TRUE" || v === "True") return true;
  if (v === "0" || v === "f" || v === "F" || v === "false" || v === "FALSE" || v === "False") return false;
  return undefined;
}

/** A boolean annotation: undefined when absent; anything but a Go boolean is refused. */
export function boolAnnotation(r: AnnotationReader, name: string): boolean | undefined {
  const raw = r.raw(name);
  if (raw === undefined) return undefined;
  return goBool(raw) ?? r.bad(name, raw, 'must be "true" or "false"');
}

/** nginx reads its timeouts as ints; bigger ones than a day are surely mistakes. */
const MAX_SECONDS = 86_400;

/** A whole number of seconds from `min` to a day (as ingress-nginx's strconv.Atoi reads it); else refused. */
export function secondsAnnotation(r: AnnotationReader, name: string, min: number): number | undefined {
  const raw = r.raw(name);
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (!/^[0-9]{1,6}$/.test(v) || Number(v) < min || Number(v) > MAX_SECONDS)
    return r.bad(name, raw, `must be a whole number of seconds from ${min} to ${MAX_SECONDS}`);
  return Number(v);
}

/** A reader of `ingress`'s annotations whose refusals go to `problems`. */
export function annotationReader(ingress: Ingress, ref: SourceRef, problems: Problem[]): AnnotationReader {
  const key = (name: string) => (name.startsWith(GATEHOUSE_PREFIX) ? name : NGINX_PREFIX + name);
  return {
    raw: (name) => annotationOf(ingress, key(name)),
    bad: (name, value, why) => {
      const shown = value.length > 120 ? `${value.slice(0, 120)}…` : value;
      const message = `annotation ${key(name)} ${JSON.stringify(shown)}: ${why}; not applied`;
      problems.push(problem(ref, "InvalidAnnotation", message));
      return undefined;
    },
  };
}

/** Reads every family's annotations of `ingress`. */
export function readRouteEdits(
  ingress: Ingress,
  ref: SourceRef,
  families: readonly AnnotationFamily[],
): IngressEdits {
  const problems: Problem[] = [];
  const reader = annotationReader(ingress, ref, problems);
  const edits: RouteEdit[] = [];
  for (const family of families) {
    const e = family.read(reader);
    if (e !== undefined) edits.push(e);
  }
  return edits.length === 0 ? { problems } : { edit: merged(edits), problems };
}

function merged(edits: readonly RouteEdit[]): RouteEdit {
  let out: RouteEdit = {};
  for (const e of edits) {
    out = {
      ...out,
      ...e,
      filters: [...(out.filters ?? []), ...(e.filters ?? [])],
      ...(out.timeouts || e.timeouts ? { timeouts: { ...out.timeouts, ...e.timeouts } } : {}),
      ...(out.perRoute && e.perRoute ? { perRoute: composed(out.perRoute, e.perRoute) } : {}),
    };
  }
  return out;
}

/** `route` with the edit applied. */
export function editedRoute(route: Route, edit: RouteEdit | undefined): Route {
  if (edit === undefined) return route;
  const out: Route = {
    ...route,
    filters: [...route.filters, ...(edit.filters ?? [])],
    ...(edit.action !== undefined && route.action.kind === "Forward" ? { action: edit.action } : {}),
    ...(edit.timeouts !== undefined ? { timeouts: { ...route.timeouts, ...edit.timeouts } } : {}),
    ...(edit.retry !== undefined ? { retry: edit.retry } : {}),
    ...(edit.accessLog === false ? { accessLog: false as const } : {}),
    ...(edit.accessLogSample !== undefined ? { accessLogSample: edit.accessLogSample } : {}),
    ...(edit.responseBandwidth !== undefined ? { responseBandwidth: edit.responseBandwidth } : {}),
    ...(edit.requestBodyMaxBytes !== undefined ? { requestBodyMaxBytes: edit.requestBodyMaxBytes } : {}),
  };
  return edit.perRoute === undefined ? out : edit.perRoute(out);
}

function composed(a: (r: Route) => Route, b: (r: Route) => Route): (r: Route) => Route {
  return (r) => b(a(r));
}

/** The virtual hosts with each Ingress's edit applied to its routes (keyed `namespace/name`). */
export function applyRouteEdits(
  virtualHosts: readonly VirtualHost[],
  edits: ReadonlyMap<string, RouteEdit>,
): VirtualHost[] {
  if (edits.size === 0) return [...virtualHosts];
  return virtualHosts.map((vh) => {
    let changed = false;
    const routes = vh.routes.map((r) => {
      const edit =
        r.source.kind === "Ingress" ? edits.get(`${r.source.namespace}/${r.source.name}`) : undefined;
      if (edit === undefined) return r;
      changed = true;
      return editedRoute(r, edit);
    });
    return changed ? { ...vh, routes } : vh;
  });
}
