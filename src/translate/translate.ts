import type { Backend, GatewayModel, Listener, Problem, TLSCertificate } from "../model/index.ts";
import type { ResourceSnapshot } from "../sources/snapshot.ts";
import type { ObjectStatus } from "../status/types.ts";
import { errorBodies } from "./common/error-bodies.ts";
import { DEFAULT_LISTENER_SOURCE } from "./common/names.ts";
import { internalProblem, sortProblems, unreadableSecretProblems } from "./common/problems.ts";
import { indexSnapshot } from "./common/snapshot-index.ts";
import { compareStrings } from "./common/sort.ts";
import { type GatewayAPITranslation, translateGatewayAPI } from "./gateway/gateway.ts";
import { applySSLRedirects, sslRedirectPlan } from "./ingress/annotations/ssl-redirect.ts";
import { dropIngressClashes, markIngressOverrides } from "./ingress/httproute-clashes.ts";
import { translateIngresses } from "./ingress/ingresses.ts";
import { applyAuthPolicies } from "./policies/auth-policy.ts";
import { type CompressionDefaults, compressionDefaults } from "./policies/compression-spec.ts";
import { applyRateLimitPolicies } from "./policies/ratelimit-policy.ts";
import { applyScaleToZeroPolicies } from "./policies/scale-policy.ts";
import { applyBackendTrafficPolicies } from "./policies/traffic-policy.ts";
import { applyWafPolicies } from "./policies/waf-policy.ts";

export interface TranslateOptions {
  /** Port of the default HTTP listener Ingress rules are served on (`--http-port`). */
  readonly httpPort: number;
  /** Port of the default HTTPS listener (`--https-port`) Ingress `spec.tls` hosts are served on. */
  readonly httpsPort: number;
  /** `namespace/name` of the TLS Secret served on `default/https` when no other certificate matches. */
  readonly defaultCertificate?: string;
  /** `namespace/name` of the ConfigMap holding the bodies of the gateway's own errors (common/error-bodies.ts). */
  readonly errorPagesConfigMap?: string;
  /** `namespace/name` of the Service requests no Ingress host or path matches go to
   * (ingress/default-backend-service.ts); absent: the gateway's 404. */
  readonly defaultBackendService?: string;
  /** Self-signed certificate made at start (proxy/tls.ts), the default when no Secret is configured. */
  readonly generatedCertificate?: { readonly certPem: string; readonly keyPem: string };
  /** ingress-nginx `ssl-redirect` default for Ingress hosts with TLS (`--ssl-redirect`). */
  readonly sslRedirect: boolean;
  /** Certificates outside their validity period at this time are refused; absent: no clock check
   * (keeps golden tests stable). `serve` passes the time of each translation. */
  readonly nowMs?: number;
  /** Our class name (`--ingress-class`): Ingresses naming it are ours even with no IngressClass object. */
  readonly ingressClass: string;
  /** The `spec.controller` of IngressClasses that are ours. */
  readonly ingressController: string;
  /** Serve Ingresses that name no class even when none of our IngressClasses is the default. */
  readonly watchIngressWithoutClass: boolean;
  /** Serve Ingresses whose access-control annotations Gatehouse does not enforce, open, instead of
   * answering 403 on their paths (`--allow-unenforced-annotations`; the warning stays). */
  readonly allowUnenforcedAnnotations: boolean;
  /** The `spec.controllerName` of GatewayClasses that are ours. */
  readonly gatewayController: string;
  /** IPv4 CIDR (`--gateway-address-pool`, e.g. `127.0.1.0/24`) Gateways without `spec.addresses` get an
   * address from; absent: they bind the process-wide address. See docs/gateway-api.md. */
  readonly gatewayAddressPool?: string;
  /** Ingress `ssl-passthrough` is served (`--enable-ssl-passthrough`, as ingress-nginx asks for it). */
  readonly enableSslPassthrough: boolean;
  /** Response header names an Ingress's `custom-headers` ConfigMap may set (`--global-allowed-response-headers`,
   * ingress-nginx's `global-allowed-response-headers`); empty: none. */
  readonly allowedResponseHeaders: readonly string[];
  /**
   * `--global-auth-*` as the `auth-*` annotations they stand for (`auth-url`, `auth-signin`,
   * `auth-response-headers`): every Ingress without an auth-url of its own uses them, unless it sets
   * `enable-global-auth: "false"` (ingress/access/authentication.ts). Undefined: none.
   */
  readonly globalAuth: Readonly<Record<string, string>> | undefined;
  /**
   * The gateway's response compression (`--compression*`): every backend that no BackendTrafficPolicy
   * gives a `compression` of its own gets it (none when its `codings` are empty, the default), and a
   * policy's fields override it (policies/compression-spec.ts).
   */
  readonly compression: CompressionDefaults;
}

export const defaultTranslateOptions: TranslateOptions = {
  httpPort: 8080,
  httpsPort: 8443,
  defaultCertificate: undefined,
  errorPagesConfigMap: undefined,
  defaultBackendService: undefined,
  generatedCertificate: undefined,
  sslRedirect: true,
  nowMs: undefined,
  ingressClass: "gatehouse",
  ingressController: "gatehouse.dev/ingress-controller",
  watchIngressWithoutClass: false,
  allowUnenforcedAnnotations: false,
  gatewayController: "gatehouse.dev/gateway-controller",
  gatewayAddressPool: undefined,
  enableSslPassthrough: false,
  allowedResponseHeaders: [],
  globalAuth: undefined,
  compression: compressionDefaults,
};

export interface TranslateResult {
  readonly model: GatewayModel;
  /** Sorted by object; each object's problems in the order of its fields. */
  readonly problems: readonly Problem[];
  /** The `.status` of every GatewayClass and Gateway of ours and every HTTPRoute and TLSRoute with a
   * parent of ours: GatewayClasses, then Gateways, then HTTPRoutes, then TLSRoutes, each sorted by
   * namespace/name. */
  readonly statuses: readonly ObjectStatus[];
}

/**
 * The snapshot as a route model. Pure (no clock, network or logging), deterministic (output does not
 * depend on input order) and total: it never throws; a broken object becomes Problems and the others go
 * on. The stages, in this order:
 * 1. Ingresses: every Ingress of our class as the default HTTP listener and, with `spec.tls`, the
 *    default HTTPS listener (translateIngresses, ingress/ingresses.ts, which lists its own steps);
 * 2. the Gateway API: GatewayClasses, Gateways, HTTPRoutes and TLSRoutes into listeners and statuses
 *    (translateGatewayAPI, gateway/gateway.ts);
 * 3. where a Gateway listener shares a default listener's address and port, an HTTPRoute claiming an
 *    Ingress path's host and path wins (ingress/httproute-clashes.ts);
 * 4. the model: the default listeners first, then the Gateway listeners (with the gateway's default
 *    certificate), every backend, the passthrough listeners;
 * 5. AuthPolicies (and the Ingress annotation naming one) put `auth` on the routes they win for, by
 *    GEP-713 attachment (policies/auth-policy.ts, policies/policy-attachment.ts);
 * 6. RateLimitPolicies (and ingress-nginx `limit-*` annotations) put `rateLimit` on routes the same way
 *    (policies/ratelimit-policy.ts), and WAFPolicies put `waf` on routes the same way, over the Ingress
 *    ModSecurity annotations' (policies/waf-policy.ts);
 * 7. BackendTrafficPolicies put their settings on the backends of the Services they target, and point
 *    the routes of the HTTPRoutes, GRPCRoutes and Gateways they target at variants of their backends with
 *    theirs; the gateway's compression (`--compression`) goes on the others (policies/traffic-policy.ts);
 * 8. ScaleToZeroPolicies (and Services' `gatehouse.dev/scale-*` annotations) put `activation` on the
 *    backends of the Services they target (policies/scale-policy.ts);
 * 9. ingress-nginx ssl-redirect: redirecting Ingress routes of the HTTP listener become 308s to https
 *    (ingress/annotations/ssl-redirect.ts), last, so the redirect comes before authentication and rate
 *    limits;
 * 10. the bodies of the gateway's own errors, from `--error-pages-configmap` (common/error-bodies.ts).
 * Statuses: the Gateway API objects' (with the Ingress overrides of stage 3), then the AuthPolicies',
 * then the RateLimitPolicies', then the WAFPolicies', then the BackendTrafficPolicies', then the ScaleToZeroPolicies'.
 */
export function translate(snapshot: ResourceSnapshot, options?: Partial<TranslateOptions>): TranslateResult {
  // Each object is translated inside its own try, so a bug triggered by one object costs only that
  // object. Anything that still escapes is a bug in the whole pass: the caller keeps its last good
  // model rather than serving an empty one.
  return translateSnapshot(snapshot, withDefaults(options));
}

function translateSnapshot(snapshot: ResourceSnapshot, opts: TranslateOptions): TranslateResult {
  const index = indexSnapshot(snapshot);
  // 1. Ingresses
  const ing = translateIngresses(snapshot, index, opts);
  // 2. Gateway API
  const gw = gatewayAPI(snapshot, index, opts);
  // 3. Ingress/HTTPRoute clashes on the default listeners
  const clash = dropIngressClashes(ing.http, gw.listeners);
  const httpsClash = ing.https ? dropIngressClashes(ing.https, gw.listeners) : undefined;
  // 4. the model
  const model = {
    listeners: [
      clash.listener,
      ...(httpsClash ? [httpsClash.listener] : []),
      ...withDefaultCertificate(gw.listeners, ing.tls.defaultCertificate),
    ],
    backends: mergeBackends(ing.backends, gw.backends),
    // Only when there are any, so a model without TLSRoutes reads (and dumps) as it always did.
    ...(gw.passthroughListeners.length > 0 || ing.passthrough
      ? { passthroughListeners: [...(ing.passthrough ? [ing.passthrough] : []), ...gw.passthroughListeners] }
      : {}),
  };
  // 5. AuthPolicies
  const auth = applyAuthPolicies(model, snapshot, opts.gatewayController, opts.globalAuth);
  // 6. RateLimitPolicies
  const limits = applyRateLimitPolicies(auth.model, snapshot, opts.gatewayController);
  const waf = applyWafPolicies(limits.model, snapshot, opts.gatewayController);
  // 7. BackendTrafficPolicies
  const traffic = applyBackendTrafficPolicies(
    waf.model,
    snapshot,
    index.services,
    opts.gatewayController,
    opts.compression,
  );
  // 8. ScaleToZeroPolicies
  const scale = applyScaleToZeroPolicies(traffic.model, snapshot, index.services, opts.gatewayController);
  // 9. ssl-redirect
  const redirects = sslRedirectPlan(ing.ingresses, ing.tls.tlsHosts, opts.httpsPort, opts.sslRedirect);
  // 10. the bodies of the gateway's own errors
  const errors = errorBodies(snapshot, opts.errorPagesConfigMap);
  const redirected = applySSLRedirects(scale.model, redirects.plan);
  return {
    model: errors.bodies === undefined ? redirected : { ...redirected, errorBodies: errors.bodies },
    problems: sortProblems([
      ...ing.problems,
      ...gw.problems,
      ...clash.problems,
      ...(httpsClash?.problems ?? []),
      ...auth.problems,
      ...limits.problems,
      ...waf.problems,
      ...traffic.problems,
      ...scale.problems,
      ...redirects.problems,
      ...errors.problems,
      ...unreadableSecretProblems(snapshot?.unreadable),
    ]),
    statuses: [
      ...markIngressOverrides(gw.statuses, mergeOverrides(clash.overrides, httpsClash?.overrides)),
      ...auth.statuses,
      ...limits.statuses,
      ...waf.statuses,
      ...traffic.statuses,
      ...scale.statuses,
    ],
  };
}

/** The Ingress paths each HTTPRoute took, on the HTTP and the HTTPS default listener. */
function mergeOverrides(
  http: ReadonlyMap<string, string[]>,
  https: ReadonlyMap<string, string[]> | undefined,
): Map<string, string[]> {
  const all = new Map(http);
  for (const [k, v] of https ?? []) all.set(k, [...(all.get(k) ?? []), ...v]);
  return all;
}

/** Gateway HTTPS listeners carry the gateway's default certificate for SNI names they do not cover. */
function withDefaultCertificate(
  listeners: readonly Listener[],
  cert: TLSCertificate | undefined,
): Listener[] {
  if (cert === undefined) return [...listeners];
  return listeners.map((l) => (l.tls ? { ...l, tls: { ...l.tls, defaultCertificate: cert } } : l));
}

/** The Gateway API half; a bug there must not cost the Ingress half (which is already built). */
function gatewayAPI(
  snapshot: ResourceSnapshot,
  index: ReturnType<typeof indexSnapshot>,
  opts: TranslateOptions,
): GatewayAPITranslation {
  try {
    return translateGatewayAPI(snapshot, index, opts);
  } catch (err) {
    const problems = [internalProblem(DEFAULT_LISTENER_SOURCE, err)];
    return { listeners: [], passthroughListeners: [], backends: [], statuses: [], problems };
  }
}

/** Ingress backends and Gateway API backends in one map, keys sorted (equal ids are the same Service port). */
function mergeBackends(
  ingress: Record<string, Backend>,
  gateway: readonly Backend[],
): Record<string, Backend> {
  const all = new Map<string, Backend>(Object.entries(ingress));
  for (const b of gateway) if (!all.has(b.id)) all.set(b.id, b);
  const out: Record<string, Backend> = {};
  for (const id of [...all.keys()].sort(compareStrings)) out[id] = all.get(id) as Backend;
  return out;
}

/** Options given, with defaults for the missing ones; an explicit `undefined` also takes the default. */
function withDefaults(options: Partial<TranslateOptions> | undefined): TranslateOptions {
  const given = Object.fromEntries(
    Object.entries(options ?? {}).filter(
      ([key, value]) => value !== undefined && key in defaultTranslateOptions,
    ),
  );
  return { ...defaultTranslateOptions, ...given };
}
