/**
 * ingress-nginx's `custom-http-errors` with `default-backend` (annotations/customhttperrors,
 * annotations/defaultbackend; nginx.tmpl's CUSTOM_ERRORS locations): responses with the listed codes, the
 * gateway's own and the backend's (`proxy_intercept_errors on`, unless `disable-proxy-intercept-errors:
 * "true"`), are replaced by the answer of the `default-backend` Service (its first port, as ingress-nginx
 * takes), asked with X-Code and the other X- fields (model/error-pages.ts). Differences, reported:
 * - `custom-http-errors` without `default-backend` asks the global default backend, as ingress-nginx
 *   does: `--default-backend-service` when given; without it, reported, and the codes are not replaced.
 * - `default-backend` alone: ingress-nginx sends the requests of a Service without endpoints there;
 *   Gatehouse answers them 503 as before.
 * A code outside 400–599 is refused (the others stay). The Ingress's canaries keep their own answers.
 */
import type { Backend, Problem, Route, RouteErrorPages, SourceRef, VirtualHost } from "../../model/index.ts";
import type { Ingress } from "../../sources/schema/networking.ts";
import { lookupServiceBackend } from "../common/backends.ts";
import { annotationOf, arrayOf, nameOf, namespaceOf, sourceRef } from "../common/objects.ts";
import { problem } from "../common/problems.ts";
import type { SnapshotIndex } from "../common/snapshot-index.ts";
import { compareStrings } from "../common/sort.ts";
import { NGINX_PREFIX } from "./annotations/nginx-annotations.ts";
import { goBool } from "./annotations/route-edits.ts";

export interface ErrorPagesResult {
  readonly virtualHosts: VirtualHost[];
  /** The backends given, with the error backends added; keys sorted. */
  readonly backends: Record<string, Backend>;
  readonly problems: Problem[];
}

const CODES = "custom-http-errors";
const BACKEND = "default-backend";
const NO_INTERCEPT = "disable-proxy-intercept-errors";

/** The error pages each Ingress asks for, set on its routes (canaries excluded by the caller). */
export function applyErrorPages(
  virtualHosts: readonly VirtualHost[],
  ingresses: readonly Ingress[],
  backends: Readonly<Record<string, Backend>>,
  index: SnapshotIndex,
  /** `--default-backend-service` (`namespace/name`): the error Service of Ingresses naming none. */
  globalBackend?: string,
): ErrorPagesResult {
  const problems: Problem[] = [];
  const added = new Map<string, Backend>();
  const wanted = new Map<string, Omit<RouteErrorPages, "serviceName" | "servicePort">>();
  for (const ingress of ingresses) {
    const pages = readErrorPages(ingress, index, problems, added, globalBackend);
    if (pages !== undefined) wanted.set(`${namespaceOf(ingress)}/${nameOf(ingress)}`, pages);
  }
  if (wanted.size === 0) return { virtualHosts: [...virtualHosts], backends: { ...backends }, problems };
  const withPages = (r: Route): Route => {
    if (r.source.kind !== "Ingress") return r;
    const pages = wanted.get(`${r.source.namespace}/${r.source.name}`);
    if (pages === undefined) return r;
    const first = r.action.kind === "Forward" ? r.action.backends[0]?.backendId : undefined;
    const service = first === undefined ? undefined : backends[first]?.service;
    const serviceName = service?.name ?? "";
    const servicePort = service === undefined ? "" : String(service.port);
    return { ...r, errorPages: { ...pages, serviceName, servicePort } };
  };
  const hosts = virtualHosts.map((vh) => ({ ...vh, routes: vh.routes.map(withPages) }));
  const all = new Map<string, Backend>([...Object.entries(backends), ...added]);
  const sorted: Record<string, Backend> = {};
  for (const id of [...all.keys()].sort(compareStrings)) sorted[id] = all.get(id) as Backend;
  return { virtualHosts: hosts, backends: sorted, problems };
}

function readErrorPages(
  ingress: Ingress,
  index: SnapshotIndex,
  problems: Problem[],
  added: Map<string, Backend>,
  globalBackend: string | undefined,
): Omit<RouteErrorPages, "serviceName" | "servicePort"> | undefined {
  const ref = sourceRef("Ingress", ingress);
  const report = (name: string, value: string, why: string, reason: string, severity: Problem["severity"]) =>
    problems.push(
      problem(ref, reason, `annotation ${NGINX_PREFIX}${name}: ${JSON.stringify(value)}: ${why}`, severity),
    );
  const bad = (name: string, value: string, why: string) =>
    report(name, value, why, "InvalidAnnotation", "error");
  // Asked for what Gatehouse does not do: said as the audit says a not-yet annotation.
  const notDone = (name: string, value: string, why: string) =>
    report(name, value, why, "AnnotationNotHonoured", "warning");
  const rawCodes = annotationOf(ingress, NGINX_PREFIX + CODES);
  const rawBackend = annotationOf(ingress, NGINX_PREFIX + BACKEND)?.trim();
  if (rawCodes === undefined || rawCodes.trim() === "") {
    const why = `without ${CODES}, requests to a Service without endpoints still get 503 (not sent to this Service)`;
    if (rawBackend !== undefined && rawBackend !== "") notDone(BACKEND, rawBackend, why);
    return undefined;
  }
  const codes = parseCodes(rawCodes, (why) => bad(CODES, rawCodes, why));
  if (codes.length === 0) return undefined;
  const namespace = namespaceOf(ingress);
  const own = rawBackend !== undefined && rawBackend !== "";
  if (!own && globalBackend === undefined) {
    notDone(
      CODES,
      rawCodes,
      `needs ${BACKEND} or --default-backend-service (the global default backend): the codes are not replaced`,
    );
    return undefined;
  }
  const [serviceNamespace, serviceName] = own ? [namespace, rawBackend] : (globalBackend ?? "").split("/");
  const what = own ? `annotation ${NGINX_PREFIX}${BACKEND}` : "--default-backend-service";
  const backend = errorBackend(index, serviceNamespace ?? "", serviceName ?? "", ref, problems, what);
  if (backend === undefined) return undefined;
  added.set(backend.id, backend);
  const rawNoIntercept = annotationOf(ingress, NGINX_PREFIX + NO_INTERCEPT);
  const noIntercept = rawNoIntercept === undefined ? false : goBool(rawNoIntercept);
  if (noIntercept === undefined && rawNoIntercept !== undefined)
    bad(NO_INTERCEPT, rawNoIntercept, "not a boolean (backend errors are replaced)");
  return {
    codes,
    backendId: backend.id,
    upstream: noIntercept !== true,
    namespace,
    ingressName: nameOf(ingress),
  };
}

/** Comma-separated status codes, 400–599, ascending without repeats; others refused. */
export function parseCodes(raw: string, refuse: (why: string) => void): number[] {
  const out = new Set<number>();
  const refused: string[] = [];
  for (const part of raw.split(",")) {
    const v = part.trim();
    if (v === "") continue;
    const n = /^\d{3}$/.test(v) ? Number(v) : Number.NaN;
    if (n >= 400 && n <= 599) out.add(n);
    else refused.push(v);
  }
  if (refused.length > 0) refuse(`${refused.join(", ")} not a status code from 400 to 599 (left out)`);
  return [...out].sort((a, b) => a - b);
}

/** The Service's first port, as ingress-nginx's default backend takes it; reported when unusable. */
function errorBackend(
  index: SnapshotIndex,
  namespace: string,
  name: string,
  ref: SourceRef,
  problems: Problem[],
  what: string,
): Backend | undefined {
  if (name.includes("/")) {
    problems.push(
      problem(
        ref,
        "InvalidAnnotation",
        `annotation ${NGINX_PREFIX}${BACKEND}: ${JSON.stringify(name)}: must name a Service in the Ingress's namespace`,
      ),
    );
    return undefined;
  }
  const port = arrayOf(index.services.get(`${namespace}/${name}`)?.spec?.ports).find(
    (p) => (p.protocol ?? "TCP") === "TCP",
  );
  const found = lookupServiceBackend(index, namespace, name, { number: port?.port ?? 0 });
  if (found.issue !== undefined)
    problems.push(
      problem(ref, found.issue.reason, `${what}: ${found.issue.message}; the gateway's own errors are sent`),
    );
  else if (found.backend.problem !== undefined)
    problems.push(
      problem(
        ref,
        "BackendUnavailable",
        `${what}: Service ${namespace}/${name} has no ready endpoints; the gateway's own errors are sent`,
        "warning",
      ),
    );
  problems.push(...found.sideProblems);
  return found.backend;
}
