/**
 * A backend with the BackendTrafficPolicy settings that decide for it, field group by field group:
 * `healthCheck`, `loadBalancer`, `circuitBreaker` and `compression` may each come from another policy
 * (the most specific that sets it: docs/traffic-policy.md, Targets and precedence). Without a policy's
 * compression, the gateway's (`--compression`) applies.
 */
import type {
  Backend,
  BackendHealthCheck,
  PassiveHealthCheck,
  Problem,
  ResponseCompression,
  SourceRef,
} from "../../../model/index.ts";
import type { BackendTrafficPolicy } from "../../../sources/schema/traffic-policy.ts";
import { problem } from "../../common/problems.ts";
import type { SourceOrder } from "../../common/sort.ts";
import { circuitBreakerOf } from "../circuit-breaker-spec.ts";
import { type CompressionDefaults, effectiveCompression } from "../compression-spec.ts";
import type { AttachablePolicy } from "../policy-attachment.ts";
import { canEject, type TrafficPolicySettings } from "../traffic-policy-spec.ts";
import type { ServiceClaimant } from "./service-targets.ts";

/** One BackendTrafficPolicy; `targetRefs` are its HTTPRoute and Gateway targets (Services apart). */
export interface TrafficCandidate extends ServiceClaimant, AttachablePolicy {
  readonly ref: SourceRef;
  readonly order: SourceOrder;
  readonly policy: BackendTrafficPolicy;
  readonly settings: TrafficPolicySettings | string;
}

/** The parts of a policy decided apart: a more specific policy that sets one takes only that one. */
export const fieldGroups = ["healthCheck", "loadBalancer", "circuitBreaker", "compression"] as const;
export type FieldGroup = (typeof fieldGroups)[number];

/** The policy deciding each field group of a backend; a group without one is not set by any. */
export type Picks = Partial<Record<FieldGroup, TrafficCandidate>>;

/** Whether a (valid) policy sets the group at all (an explicit all-0 passive check does: it says "off"). */
export function setsGroup(c: TrafficCandidate, g: FieldGroup): boolean {
  const s = c.settings;
  if (typeof s === "string") return false;
  if (g === "healthCheck") return s.passive !== undefined || s.active !== undefined;
  return s[g] !== undefined;
}

/** Every group from one policy (or none). */
export function allFrom(c: TrafficCandidate | undefined): Picks {
  if (c === undefined || typeof c.settings === "string") return {};
  const picks: Picks = {};
  for (const g of fieldGroups) if (setsGroup(c, g)) picks[g] = c;
  return picks;
}

/** What a backend applies independently of any policy: the gateway's compression, built once. */
export interface BackendDefaults {
  readonly compression: CompressionDefaults;
  /** The `--compression` flags' compression, one object shared by every backend without a policy's. */
  readonly flags: ResponseCompression | undefined;
}

export function backendDefaults(compression: CompressionDefaults): BackendDefaults {
  return { compression, flags: effectiveCompression(compression, undefined) };
}

/** `b` (as the Gateway API and Ingress translation built it) with the picks applied; `b` itself if none. */
export function withSettings(
  b: Backend,
  picks: Picks,
  defaults: BackendDefaults,
  problems: Problem[],
): Backend {
  const settingsOf = (g: FieldGroup) => {
    const c = picks[g];
    return c === undefined || typeof c.settings === "string" ? undefined : { c, s: c.settings };
  };
  const comp = settingsOf("compression");
  const own = comp?.s.compression;
  const compression =
    own === undefined || comp === undefined
      ? defaults.flags
      : effectiveCompression(defaults.compression, { settings: own, source: comp.c.ref });
  const hc = settingsOf("healthCheck");
  const healthCheck = hc === undefined ? undefined : healthCheckOf(hc.c.ref, b, hc.s, problems);
  const cbp = settingsOf("circuitBreaker");
  const cb = cbp?.s.circuitBreaker;
  const circuitBreaker = cb === undefined || cbp === undefined ? undefined : circuitBreakerOf(cb, cbp.c.ref);
  const lbp = settingsOf("loadBalancer");
  const lb = lbp?.s.loadBalancer;
  const loadBalancer = lb === undefined || lbp === undefined ? undefined : { source: lbp.c.ref, ...lb };
  if (
    healthCheck === undefined &&
    compression === undefined &&
    circuitBreaker === undefined &&
    loadBalancer === undefined
  )
    return b;
  return {
    ...b,
    ...(healthCheck !== undefined ? { healthCheck } : {}),
    ...(compression !== undefined ? { compression } : {}),
    ...(circuitBreaker !== undefined ? { circuitBreaker } : {}),
    ...(loadBalancer !== undefined ? { loadBalancer } : {}),
  };
}

/**
 * The backend's health checking: passive when it can eject, active unless the backend speaks HTTP/2
 * with prior knowledge (h2c, gRPC): the probes are HTTP/1.1, so such a backend is not probed and a
 * warning says so.
 */
function healthCheckOf(
  source: SourceRef,
  b: Backend,
  settings: TrafficPolicySettings,
  problems: Problem[],
): BackendHealthCheck | undefined {
  const passive = settings.passive;
  const eject = passive !== undefined && canEject(passive);
  let active = settings.active;
  if (active !== undefined && b.protocol === "h2c") {
    const why = `healthCheck.active: backend ${b.id} speaks HTTP/2 with prior knowledge (h2c, gRPC) and the probes are HTTP/1.1: it is not probed`;
    problems.push(problem(source, "NotProbed", why, "warning"));
    active = undefined;
  }
  if (!eject && active === undefined) return undefined;
  return {
    source,
    ...(eject ? { passive: passive as PassiveHealthCheck } : {}),
    ...(active !== undefined ? { active } : {}),
  };
}
