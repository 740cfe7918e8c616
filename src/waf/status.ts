/**
 * The runtime half of a WAF's status: whether the engine can run its rule set. Translation is pure and
 * says `Accepted`; the library is opened and the rule set built only when the proxy compiles its table
 * (compiled.ts, engine-queue.ts), so whether the routes answer 503 is known only here. Each WAFPolicy in
 * force gets `Degraded` on its accepted ancestors (as AuthPolicy's keys and RateLimitPolicy's store do),
 * and every source of a WAF that cannot run (an Ingress's annotations too) is a problem at /debug/problems.
 */
import type { GatewayModel, Problem, RouteWaf, SourceRef } from "../model/index.ts";
import { condition } from "../status/conditions.ts";
import { withAncestorCondition } from "../status/runtime-conditions.ts";
import type { Condition, ObjectStatus } from "../status/types.ts";
import { ruleSetDirectives } from "./directives.ts";
import { engineQueue } from "./engine-queue.ts";
import { libraryPath, openLibrary } from "./library.ts";

export const WafDegradedCondition = "Degraded";

export type WafHealth =
  | { readonly state: "ready" }
  | { readonly state: "loading" }
  | {
      readonly state: "failed";
      readonly reason: "EngineUnavailable" | "RuleSetFailed";
      readonly why: string;
    };

/** A WAF's source and how its routes fare now (the worst of them). */
export interface SourceWafHealth {
  readonly source: SourceRef;
  readonly health: WafHealth;
}

/** How the routes with `waf` fare now; undefined for a WAF translate marked invalid (its status says so). */
export function wafHealthOf(waf: RouteWaf): WafHealth | undefined {
  if (waf.invalid !== undefined) return undefined;
  const lib = openLibrary(libraryPath());
  if ("error" in lib) return { state: "failed", reason: "EngineUnavailable", why: lib.error };
  const down = engineQueue.downReason;
  if (down !== undefined) return { state: "failed", reason: "EngineUnavailable", why: down };
  const set = engineQueue.ruleSet(ruleSetDirectives(waf));
  if (set?.error !== undefined) return { state: "failed", reason: "RuleSetFailed", why: set.error };
  return set?.loaded === true ? { state: "ready" } : { state: "loading" };
}

const rank = { ready: 0, loading: 1, failed: 2 } as const;

/** Every WAF source the model's routes carry, by `Kind/namespace/name`, with its health. */
export function wafHealth(model: GatewayModel): Map<string, SourceWafHealth> {
  const out = new Map<string, SourceWafHealth>();
  const bySettings = new Map<RouteWaf, WafHealth | undefined>();
  for (const l of model.listeners)
    for (const v of l.virtualHosts)
      for (const r of v.routes) {
        const waf = r.waf;
        if (waf === undefined) continue;
        const health = bySettings.has(waf) ? bySettings.get(waf) : wafHealthOf(waf);
        bySettings.set(waf, health);
        if (health === undefined) continue;
        const key = `${waf.source.kind}/${waf.source.namespace}/${waf.source.name}`;
        const was = out.get(key);
        if (was === undefined || rank[health.state] > rank[was.health.state])
          out.set(key, { source: waf.source, health });
      }
  return out;
}

/** What a status watcher compares to tell whether to publish again. */
export function wafHealthSignature(health: ReadonlyMap<string, SourceWafHealth>): string {
  return [...health]
    .map(([k, h]) => `${k}=${h.health.state}:${"why" in h.health ? h.health.why : ""}`)
    .join("\n");
}

function degradedCondition(health: WafHealth, generation: number | undefined): Condition {
  if (health.state === "failed")
    return condition(
      WafDegradedCondition,
      true,
      health.reason,
      `${health.why}; the policy's routes answer 503, nothing is forwarded uninspected`,
      generation,
    );
  if (health.state === "ready")
    return condition(
      WafDegradedCondition,
      false,
      "EngineReady",
      "the rule set is loaded in the WAF engine",
      generation,
    );
  // Not yet known either way: requests wait for the load (the worker takes its messages in order).
  return {
    ...condition(
      WafDegradedCondition,
      false,
      "RuleSetLoading",
      "the WAF engine is loading the rule set",
      generation,
    ),
    status: "Unknown",
  };
}

/** `statuses` with `Degraded` on every accepted ancestor of the WAFPolicies in `health`. */
export function withWafHealth(
  statuses: readonly ObjectStatus[],
  health: ReadonlyMap<string, SourceWafHealth>,
): ObjectStatus[] {
  if (health.size === 0) return [...statuses];
  return withAncestorCondition(statuses, "WAFPolicy", (s) => {
    const h = health.get(`WAFPolicy/${s.target.namespace}/${s.target.name}`);
    return h === undefined ? undefined : degradedCondition(h.health, s.generation);
  });
}

/** A problem for each source whose WAF cannot run (an Ingress's annotations have no status of their own). */
export function wafProblems(health: ReadonlyMap<string, SourceWafHealth>): Problem[] {
  const out: Problem[] = [];
  for (const { source, health: h } of health.values())
    if (h.state === "failed")
      out.push({
        object: source,
        reason: h.reason === "RuleSetFailed" ? "WAFRuleSetFailed" : "WAFEngineUnavailable",
        message: `${h.why}; its WAF routes answer 503, nothing is forwarded uninspected`,
        severity: "error",
      });
  return out;
}
