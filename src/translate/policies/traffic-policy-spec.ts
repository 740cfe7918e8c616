/**
 * The spec of a BackendTrafficPolicy, judged field by field (the source schema checks only the envelope
 * and targetRefs, so a wrong policy still gets an `Invalid` condition naming the field). Names and
 * defaults are Envoy Gateway's (its BackendTrafficPolicy): `healthCheck.passive`, `healthCheck.active`
 * (active-health-spec.ts), `compression` (compression-spec.ts), `circuitBreaker`
 * (circuit-breaker-spec.ts) and `loadBalancer` (load-balancer-spec.ts), so a policy written for it reads
 * the same here. Unknown fields are errors, and fields Gatehouse does not do yet (Envoy Gateway's other
 * BackendTrafficPolicy fields) are refused by name: a policy is applied whole or not at all, never in
 * part without a word.
 */
import type { ActiveHealthCheck, PassiveHealthCheck } from "../../model/index.ts";
import { parseDuration } from "../common/durations.ts";
import { parseActiveHealthCheck } from "./active-health-spec.ts";
import { type PolicyCircuitBreaker, parseCircuitBreakerSpec } from "./circuit-breaker-spec.ts";
import { type PolicyCompression, parseCompressionSpec } from "./compression-spec.ts";
import { type PolicyLoadBalancer, parseLoadBalancerSpec } from "./load-balancer-spec.ts";

/** What a valid policy sets; both undefined: the policy sets nothing (a warning says so). */
export interface TrafficPolicySettings {
  readonly passive: PassiveHealthCheck | undefined;
  /** `spec.compression`; undefined: not set (the gateway's `--compression` applies). */
  readonly compression?: PolicyCompression;
  /** `spec.circuitBreaker` (circuit-breaker-spec.ts); undefined: not set, no caps. */
  readonly circuitBreaker?: PolicyCircuitBreaker;
  /** `spec.healthCheck.active` (active-health-spec.ts); undefined: no probes. */
  readonly active?: ActiveHealthCheck;
  /** `spec.loadBalancer` (load-balancer-spec.ts); undefined: not set, the routes' balancing. */
  readonly loadBalancer?: PolicyLoadBalancer;
}

/** Envoy Gateway's defaults (gateway.envoyproxy.io/v1alpha1 PassiveHealthCheck). */
export const passiveDefaults: PassiveHealthCheck = {
  consecutive5xxErrors: 5,
  consecutiveGatewayErrors: 0,
  splitExternalLocalOriginErrors: false,
  consecutiveLocalOriginFailures: 5,
  baseEjectionMs: 30_000,
  intervalMs: 3_000,
  maxEjectionPercent: 10,
};

/** Envoy Gateway BackendTrafficPolicy fields Gatehouse does not do (yet): refused by name. */
const notYet: Readonly<Record<string, string>> = {
  retry: "retries by policy (HTTPRoute retry and ingress-nginx proxy-next-upstream do them)",
  timeout: "timeouts by policy (HTTPRoute timeouts and ingress-nginx proxy-*-timeout do them)",
  rateLimit: "rate limits here (a gatehouse.dev RateLimitPolicy does them)",
  faultInjection: "fault injection",
  tcpKeepalive: "TCP keepalive settings",
  proxyProtocol: "PROXY protocol to backends",
  connection: "connection limits",
  dns: "DNS settings",
  http2: "HTTP/2 settings",
  responseOverride: "response overrides",
  targetRef: "a single targetRef (use targetRefs)",
  targetSelectors: "target selectors",
  mergeType:
    "a merge type (a route's policy is always merged with its Gateway's by field group: docs/traffic-policy.md)",
};

const passiveFields = new Set([
  "consecutive5XxErrors",
  "consecutiveGatewayErrors",
  "splitExternalLocalOriginErrors",
  "consecutiveLocalOriginFailures",
  "baseEjectionTime",
  "interval",
  "maxEjectionPercent",
]);

const taken = new Set(["targetRefs", "healthCheck", "compression", "circuitBreaker", "loadBalancer"]);

/** The policy's settings, or why it cannot be applied (one message naming the field). */
export function parseTrafficPolicySpec(spec: Record<string, unknown>): TrafficPolicySettings | string {
  for (const key of Object.keys(spec)) {
    if (taken.has(key)) continue;
    const what = notYet[key];
    return what !== undefined ? `spec.${key}: ${what} is not implemented yet` : `spec.${key}: unknown field`;
  }
  const health = parseHealthCheck(spec);
  if (typeof health === "string") return health;
  const cb = spec.circuitBreaker;
  const circuitBreaker = cb === undefined || cb === null ? undefined : parseCircuitBreakerSpec(cb);
  if (typeof circuitBreaker === "string") return circuitBreaker;
  const lb = spec.loadBalancer;
  const loadBalancer = lb === undefined || lb === null ? undefined : parseLoadBalancerSpec(lb);
  if (typeof loadBalancer === "string") return loadBalancer;
  const withBreaker = {
    ...health,
    ...(circuitBreaker !== undefined ? { circuitBreaker } : {}),
    ...(loadBalancer !== undefined ? { loadBalancer } : {}),
  };
  if (spec.compression === undefined || spec.compression === null) return withBreaker;
  const compression = parseCompressionSpec(spec.compression);
  return typeof compression === "string" ? compression : { ...withBreaker, compression };
}

function parseHealthCheck(spec: Record<string, unknown>): TrafficPolicySettings | string {
  const hc = spec.healthCheck;
  if (hc === undefined || hc === null) return { passive: undefined };
  if (typeof hc !== "object" || Array.isArray(hc)) return "spec.healthCheck: must be an object";
  for (const key of Object.keys(hc)) {
    if (key === "passive" || key === "active") continue;
    if (key === "panicThreshold")
      return "spec.healthCheck.panicThreshold: is not implemented (ejection never takes a backend's last endpoint; active checks route to every endpoint when all are unhealthy)";
    return `spec.healthCheck.${key}: unknown field`;
  }
  const a = (hc as Record<string, unknown>).active;
  const active = a === undefined || a === null ? undefined : parseActiveHealthCheck(a);
  if (typeof active === "string") return active;
  const p = (hc as Record<string, unknown>).passive;
  const withActive = (s: TrafficPolicySettings) => (active === undefined ? s : { ...s, active });
  if (p === undefined || p === null) return withActive({ passive: undefined });
  if (typeof p !== "object" || Array.isArray(p)) return "spec.healthCheck.passive: must be an object";
  const passive = parsePassive(p as Record<string, unknown>);
  return typeof passive === "string" ? passive : withActive(passive);
}

function parsePassive(p: Record<string, unknown>): TrafficPolicySettings | string {
  const at = (f: string) => `spec.healthCheck.passive.${f}`;
  for (const key of Object.keys(p)) {
    if (passiveFields.has(key)) continue;
    if (key === "failurePercentageThreshold")
      return `${at(key)}: ejection by failure percentage is not implemented yet (the consecutive counts are)`;
    const near = [...passiveFields].find((f) => f.toLowerCase() === key.toLowerCase());
    return `${at(key)}: unknown field${near === undefined ? "" : ` (the field is spelt ${near})`}`;
  }
  const d = passiveDefaults;
  const count = (f: string, fallback: number, max: number): number | string => {
    const v = p[f];
    if (v === undefined) return fallback;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > max)
      return `${at(f)}: must be an integer from 0 to ${max}, got ${JSON.stringify(v)}`;
    return v;
  };
  const duration = (f: string, fallback: number): number | string => {
    const v = p[f];
    if (v === undefined) return fallback;
    const ms = typeof v === "string" ? parseDuration(v) : undefined;
    if (ms === undefined || ms <= 0)
      return `${at(f)}: must be a positive Gateway API duration (e.g. 30s, 500ms), got ${JSON.stringify(v)}`;
    return ms;
  };
  const split = p.splitExternalLocalOriginErrors ?? d.splitExternalLocalOriginErrors;
  if (typeof split !== "boolean") return `${at("splitExternalLocalOriginErrors")}: must be true or false`;
  const values = [
    count("consecutive5XxErrors", d.consecutive5xxErrors, 1000),
    count("consecutiveGatewayErrors", d.consecutiveGatewayErrors, 1000),
    count("consecutiveLocalOriginFailures", d.consecutiveLocalOriginFailures, 1000),
    duration("baseEjectionTime", d.baseEjectionMs),
    duration("interval", d.intervalMs),
    count("maxEjectionPercent", d.maxEjectionPercent, 100),
  ] as const;
  const wrong = values.find((v) => typeof v === "string");
  if (wrong !== undefined) return wrong as string;
  const [c5xx, gateway, local, baseEjectionMs, intervalMs, maxEjectionPercent] =
    values as unknown as number[];
  return {
    passive: {
      consecutive5xxErrors: c5xx as number,
      consecutiveGatewayErrors: gateway as number,
      splitExternalLocalOriginErrors: split,
      consecutiveLocalOriginFailures: local as number,
      baseEjectionMs: baseEjectionMs as number,
      intervalMs: intervalMs as number,
      maxEjectionPercent: maxEjectionPercent as number,
    },
  };
}

/** Whether passive checking as configured can ever eject (every count 0 cannot). */
export function canEject(p: PassiveHealthCheck): boolean {
  return (
    p.consecutive5xxErrors > 0 ||
    p.consecutiveGatewayErrors > 0 ||
    (p.splitExternalLocalOriginErrors && p.consecutiveLocalOriginFailures > 0)
  );
}
