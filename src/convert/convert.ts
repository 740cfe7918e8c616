/**
 * # src/convert: Ingress → Gateway API (`gatehouse convert`)
 *
 * `convertIngresses(snapshot, options)` is pure, like `translate`: it runs the one translation serve uses,
 * then writes the model routes whose source is an Ingress back as Gateway API objects, so what is written
 * is what Gatehouse served, annotations applied, canaries merged, clashes decided. Files, one concern each:
 * - `gateway.ts`: the Gateway standing in for the Ingress listeners (or `--gateway NS/NAME` to attach to),
 *   its HTTPS listeners from `spec.tls`, ReferenceGrants for Secrets in other namespaces;
 * - `httproutes.ts`: HTTPRoutes, one per Ingress (more when its hosts differ or past the limits);
 * - `rules.ts`, `filters.ts`, `backend-refs.ts`: one model route as one HTTPRoute rule;
 * - `route-filters.ts`: HTTPRouteFilters for what Gateway API has no field for (not with `portable`);
 * - `passthrough.ts`: `ssl-passthrough` hosts as TLS listeners and TLSRoutes;
 * - `policies.ts`: AuthPolicy, RateLimitPolicy and WAFPolicy (`waf.ts`) for the guards Gateway API has no
 *   field for;
 * - `backend-tls.ts`: `backend-protocol` TLS as BackendTLSPolicies (with their CA ConfigMaps), h2c as a finding;
 * - `verify.ts`: the output translated again, each converted host's routes compared with the Ingress's;
 * - `findings.ts`: what was not kept; `output.ts`: the YAML, each finding as a comment beside its object.
 * Nothing is dropped without a finding: a finding is a comment, a stderr line and a `--strict` failure.
 */
import type { ResourceSnapshot } from "../sources/snapshot.ts";
import { DEFAULT_HTTP_LISTENER, DEFAULT_HTTPS_LISTENER } from "../translate/common/names.ts";
import { annotationOf, nameOf, namespaceOf, sourceRef } from "../translate/common/objects.ts";
import { NGINX_PREFIX } from "../translate/ingress/annotations/nginx-annotations.ts";
import { type TranslateOptions, translate } from "../translate/translate.ts";
import { convertBackendProtocols } from "./backend-tls.ts";
import { type Finding, Findings } from "./findings.ts";
import { type GatewayRef, planGateway } from "./gateway.ts";
import { convertHTTPRoutes } from "./httproutes.ts";
import { SOURCE_ANNOTATION } from "./names.ts";
import { convertPassthrough } from "./passthrough.ts";
import { convertPolicies } from "./policies.ts";
import { RouteFilters } from "./route-filters.ts";
import { verifyConversion } from "./verify.ts";

type Json = Record<string, unknown>;

export interface ConvertOptions {
  readonly translate: Partial<TranslateOptions>;
  /** Attach to this Gateway instead of writing one. */
  readonly gateway?: GatewayRef;
  /**
   * Write Gateway API only: no HTTPRouteFilter and no `(?i)`; what needs them is a finding instead
   * (`--portable`, for a Gateway API implementation other than Gatehouse).
   */
  readonly portable?: boolean;
}

export interface ConvertResult {
  /** Objects to apply, in output order: Gateway, ReferenceGrants, HTTPRoutes, HTTPRouteFilters, TLSRoutes,
   * policies, then BackendTLSPolicies with their CA ConfigMaps. */
  readonly objects: readonly Json[];
  readonly findings: readonly Finding[];
  /** How many converted hosts the verification compared, and how many matched. */
  readonly verified: { readonly hosts: number; readonly same: number; readonly skipped?: string };
}

export function convertIngresses(snapshot: ResourceSnapshot, options: ConvertOptions): ConvertResult {
  const findings = new Findings();
  const result = translate(snapshot, options.translate);
  for (const p of result.problems)
    if (p.severity !== "info" && p.object.kind === "Ingress")
      findings.add(p.object, `translate ${p.severity}: ${p.message}`, "problem");
  const http = result.model.listeners.find((l) => l.name === DEFAULT_HTTP_LISTENER);
  const https = result.model.listeners.find((l) => l.name === DEFAULT_HTTPS_LISTENER);
  const plan = planGateway(http, https, options.gateway, findings);
  const ingressListeners = [http, https].filter((l) => l !== undefined);
  const ingressNames = snapshot.ingresses.map((i) => `${namespaceOf(i)}/${nameOf(i)}`);
  const routeFilters = options.portable ? undefined : new RouteFilters();
  const routes = convertHTTPRoutes(
    result.model,
    ingressListeners,
    plan,
    findings,
    ingressNames,
    routeFilters,
  );
  const policies = convertPolicies(routes, snapshot, findings);
  const passthrough = convertPassthrough(result.model, plan, findings, ingressNames);
  const backendTLS = convertBackendProtocols(result.model, ingressListeners, snapshot, findings);
  const served = new Set([
    ...routes.map((r) => `${r.ingress.namespace}/${r.ingress.name}`),
    ...passthrough.routes.map((r) => {
      const meta = r.metadata as { namespace: string; annotations: Record<string, string> };
      return `${meta.namespace}/${meta.annotations[SOURCE_ANNOTATION]}`;
    }),
  ]);
  for (const ing of snapshot.ingresses) {
    const ref = sourceRef("Ingress", ing);
    if (served.has(`${ref.namespace}/${ref.name}`) || findings.about(ref).length > 0) continue;
    const canary = annotationOf(ing, `${NGINX_PREFIX}canary`)?.trim() === "true";
    findings.add(
      ref,
      canary
        ? "a canary: its routes are written in the HTTPRoute of the Ingress it joins"
        : "no route of it is served by Gatehouse (another class, or nothing valid): nothing written",
      "note",
    );
  }
  const objects = [
    ...plan.objects,
    ...routes.map((r) => r.object),
    ...(routeFilters?.objects ?? []),
    ...passthrough.routes,
    ...policies,
    ...backendTLS,
  ];
  const verified = verifyConversion(
    snapshot,
    options.translate,
    result.model,
    objects,
    plan,
    findings,
    passthrough.sections,
  );
  return { objects, findings: findings.list, verified };
}
