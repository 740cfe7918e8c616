import type { Problem, SourceRef } from "../../model/index.ts";
import type { Ingress, IngressBackend } from "../../sources/schema/networking.ts";
import type { ServicePortSelector } from "../common/backends.ts";
import { type HostPattern, parseIngressHost } from "../common/host-patterns.ts";
import { ingressPathRouteName } from "../common/names.ts";
import { arrayOf, creationMillis, sourceRef } from "../common/objects.ts";
import { problem } from "../common/problems.ts";
import type { SourceOrder } from "../common/sort.ts";
import type { ConflictCandidate } from "./path-conflicts.ts";
import { parseIngressPath } from "./paths.ts";

/** A validated Ingress service backend, not yet resolved against Services. */
export interface BackendTarget {
  readonly serviceName: string;
  readonly port: ServicePortSelector;
  /** Field path of the backend, e.g. `spec.rules[0].http.paths[1].backend`. */
  readonly field: string;
}

/** One route to be: where it goes, why it is there, and what it forwards to. */
export interface RouteCandidate extends ConflictCandidate {
  readonly name: string;
  readonly backend: BackendTarget;
  /** The rule's path as written (a regex under use-regex or rewrite-target); absent for default backends. */
  readonly written?: string;
}

/** What one Ingress contributes, before it meets the other Ingresses. */
export interface IngressTranslation {
  readonly ref: SourceRef;
  readonly order: SourceOrder;
  /** One per valid path, in rule/path order. */
  readonly routes: readonly RouteCandidate[];
  /** Valid hosts its rules name (also rules without paths), distinct, in rule order. */
  readonly hosts: readonly HostPattern[];
  readonly defaultBackend?: BackendTarget;
  readonly problems: readonly Problem[];
}

const pathTypes = new Set(["Exact", "Prefix", "ImplementationSpecific"]);

/**
 * One Ingress's rules as route candidates. Each broken part is dropped on its own with an error Problem
 * naming the field and value: a bad host drops its rule, a bad path or backend drops that path.
 * Annotations and `spec.tls` are not read here (later features).
 */
export function translateIngress(ingress: Ingress): IngressTranslation {
  const ref = sourceRef("Ingress", ingress);
  const order: SourceOrder = { namespace: ref.namespace, name: ref.name, createdMs: creationMillis(ingress) };
  const problems: Problem[] = [];
  const routes: RouteCandidate[] = [];
  const hosts: HostPattern[] = [];
  arrayOf(ingress.spec?.rules).forEach((rule, i) => {
    const hostParse = parseIngressHost(rule?.host);
    if (!hostParse.ok) {
      problems.push(
        problem(ref, "InvalidHost", `spec.rules[${i}].host "${rule.host}": ${hostParse.message}`),
      );
      return;
    }
    const host = hostParse.host;
    if (!hosts.some((h) => h.hostname === host.hostname)) hosts.push(host);
    arrayOf(rule.http?.paths).forEach((p, j) => {
      const field = `spec.rules[${i}].http.paths[${j}]`;
      if (!pathTypes.has(p?.pathType)) {
        const msg = `${field}.pathType "${p?.pathType}": must be one of Exact, Prefix, ImplementationSpecific`;
        problems.push(problem(ref, "InvalidPath", msg));
        return;
      }
      const pathParse = parseIngressPath(p.pathType, p.path);
      if (!pathParse.ok) {
        const shown = p.path === undefined || p.path === "" ? "" : ` "${p.path}"`;
        problems.push(problem(ref, "InvalidPath", `${field}.path${shown}: ${pathParse.message}`));
        return;
      }
      const backend = backendTarget(ref, p.backend, `${field}.backend`, problems);
      if (!backend) return;
      routes.push({
        name: ingressPathRouteName(ref.namespace, ref.name, i, j),
        ref,
        field,
        label: `${pathParse.path.type} path "${pathParse.path.value}"`,
        host,
        path: pathParse.path,
        isDefault: false,
        source: order,
        ruleIndex: i,
        pathIndex: j,
        backend,
        written: typeof p.path === "string" && p.path !== "" ? p.path : "/",
      });
    });
  });
  const def = ingress.spec?.defaultBackend;
  const defaultBackend = def ? backendTarget(ref, def, "spec.defaultBackend", problems) : undefined;
  return { ref, order, routes, hosts, problems, ...(defaultBackend ? { defaultBackend } : {}) };
}

/** A service backend as a target, or undefined (with a Problem) for resource or malformed backends. */
function backendTarget(
  ref: SourceRef,
  backend: IngressBackend | undefined,
  field: string,
  problems: Problem[],
): BackendTarget | undefined {
  const fail = (reason: string, message: string) => {
    problems.push(problem(ref, reason, message));
    return undefined;
  };
  if (backend?.resource && !backend.service) {
    const r = backend.resource;
    const dropped = field === "spec.defaultBackend" ? "default backend" : "path";
    const what = `${r.apiGroup ? `${r.apiGroup}/` : ""}${r.kind} "${r.name}"`;
    return fail(
      "UnsupportedBackend",
      `${field}.resource ${what}: resource backends are not supported, only service backends; ${dropped} ignored`,
    );
  }
  const svc = backend?.service;
  if (!svc || backend.resource)
    return fail("InvalidBackend", `${field}: exactly one of service or resource must be set`);
  const { number, name } = svc.port ?? {};
  if ((number === undefined) === (name === undefined)) {
    return fail("InvalidBackend", `${field}.service.port: exactly one of number or name must be set`);
  }
  const port: ServicePortSelector = number !== undefined ? { number } : { name: name as string };
  return { serviceName: svc.name, port, field };
}
