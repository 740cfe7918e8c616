/**
 * WAFPolicies onto the built model (docs/waf.md): each placed route gets the `waf` of the policy that wins
 * GEP-713 attachment for it (policy-attachment.ts: HTTPRoute rule > HTTPRoute or Ingress > Gateway
 * listener > Gateway; the oldest of policies on one target), and each policy its ancestor status. The spec
 * holds the same structured fields as the Ingress annotations (ingress/access/modsecurity.ts), never rule
 * text. Never open: an invalid policy is reported (`Invalid`) and still attaches exactly as a valid one
 * would, its routes carrying a WAF marked `invalid` (they answer 503, nothing uninspected is forwarded). A
 * WAFPolicy that applies to an Ingress's route takes precedence over its annotations.
 */
import { isToken } from "../../model/http-syntax.ts";
import type { GatewayModel, Problem, RouteWaf, SourceRef } from "../../model/index.ts";
import { policyGroup } from "../../sources/schema/groups.ts";
import type { WAFPolicy } from "../../sources/schema/policies.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import { generationOf } from "../../status/conditions.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { ruleTagPattern } from "../../waf/directives.ts";
import { wafPolicyName } from "../common/names.ts";
import { arrayOf, creationMillis } from "../common/objects.ts";
import { builtEach } from "../common/problems.ts";
import { compareStrings } from "../common/sort.ts";
import { RULE_ID, WAF_BOUNDS, WAF_DEFAULTS } from "../ingress/access/modsecurity.ts";
import {
  type AncestorResult,
  type AttachablePolicy,
  attachPolicies,
  mapPlacedRoutes,
  policyTargets,
} from "./policy-attachment.ts";
import { type PolicyStatusInput, policyProblems, policyStatus } from "./policy-status.ts";

/** Everything of a RouteWaf a policy decides; the route adds source and name. */
export type WafSettings = Omit<RouteWaf, "source" | "policy" | "invalid">;

export interface WafPolicyTranslation {
  readonly model: GatewayModel;
  /** One per WAFPolicy, by namespace/name. */
  readonly statuses: readonly ObjectStatus[];
  readonly problems: readonly Problem[];
}

interface Candidate extends AttachablePolicy {
  readonly generation: number | undefined;
  readonly waf: RouteWaf;
}

/** What the status message and problem of an invalid policy add: its routes are not served. */
const failsClosed = "the routes it applies to fail closed (503)";
/** Said on every target a policy applies to: what the engine does not see (never silent). */
const notInspected =
  "the policy applies to this target; responses (CRS 3.3's response rules all read the body, never buffered here), WebSocket frames and body bytes past requestBody.limitBytes are not inspected (docs/waf.md)";

export function applyWafPolicies(
  model: GatewayModel,
  snapshot: ResourceSnapshot,
  controllerName: string,
): WafPolicyTranslation {
  const problems: Problem[] = [];
  const candidates = builtEach(snapshot?.wafPolicies, "WAFPolicy", candidate, problems);
  if (candidates.length === 0) return { model, statuses: [], problems };
  const targets = policyTargets(snapshot);
  // Invalid policies attach too (fail closed): they win where they would have won.
  const attached = attachPolicies(candidates, targets);
  const next = mapPlacedRoutes(model, (listener, route) => {
    const p = attached.policyFor(listener, route);
    return p === undefined ? route : { ...route, waf: p.waf };
  });
  const statuses: ObjectStatus[] = [];
  const sorted = [...candidates].sort(
    (a, b) => compareStrings(a.ref.namespace, b.ref.namespace) || compareStrings(a.ref.name, b.ref.name),
  );
  for (const c of sorted) {
    const key = `${c.ref.namespace}/${c.ref.name}`;
    const invalid = c.waf.invalid;
    // An invalid policy says what is wrong on every target found, Conflicted or not (judged alone).
    const found =
      invalid !== undefined
        ? (attachPolicies([c], targets).ancestors.get(key) ?? [])
        : (attached.ancestors.get(key) ?? []);
    const ancestors: AncestorResult[] = found.map((a) =>
      a.outcome === "Accepted" ? { ...a, message: notInspected } : a,
    );
    const input: PolicyStatusInput = {
      group: policyGroup,
      ref: c.ref,
      generation: c.generation,
      controllerName,
      ancestors,
      ...(invalid !== undefined ? { invalid } : {}),
    };
    statuses.push(policyStatus(input));
    problems.push(
      ...policyProblems(invalid !== undefined ? { ...input, invalid: `${invalid}; ${failsClosed}` } : input),
    );
  }
  return { model: next, statuses, problems };
}

function candidate(p: WAFPolicy, ref: SourceRef): Candidate {
  const settings = parseWafSpec((p.spec ?? {}) as Record<string, unknown>);
  const named = { source: ref, policy: wafPolicyName(ref.namespace, ref.name) };
  // One object per policy, so the proxy builds one rule set for all of its routes.
  const waf: RouteWaf =
    typeof settings === "string" ? { ...named, ...defaults(), invalid: settings } : { ...named, ...settings };
  return {
    ref,
    order: { namespace: ref.namespace, name: ref.name, createdMs: creationMillis(p) },
    targetRefs: arrayOf(p.spec?.targetRefs),
    generation: generationOf(p),
    waf,
  };
}

function defaults(): WafSettings {
  return {
    mode: "Enforce",
    coreRuleSet: true,
    paranoiaLevel: WAF_DEFAULTS.paranoiaLevel,
    inboundAnomalyThreshold: WAF_DEFAULTS.inboundAnomalyThreshold,
    excludedRuleIds: [],
    excludedRuleTags: [],
    requestBodyLimitBytes: WAF_DEFAULTS.requestBodyLimitBytes,
    requestBodyOverLimit: WAF_DEFAULTS.requestBodyOverLimit,
    maxArguments: WAF_DEFAULTS.maxArguments,
  };
}

const specFields = [
  "targetRefs",
  "mode",
  "coreRuleSet",
  "requestBody",
  "maxArguments",
  "transactionIdHeader",
];
const crsFields = ["enabled", "paranoiaLevel", "anomalyThreshold", "excludedRuleIds", "excludedRuleTags"];
const bodyFields = ["limitBytes", "overLimit"];

/**
 * The settings of a WAFPolicy spec, or the first problem as `<field>: <why>`. Unknown fields are errors: a
 * misspelt `paranoialevel` must not silently leave the default in force. Unlike the annotations (which
 * follow ingress-nginx's detection-only default), a policy enforces unless it says `DetectionOnly`.
 */
export function parseWafSpec(spec: Readonly<Record<string, unknown>>): WafSettings | string {
  const unknown = unknownFields(spec, specFields);
  if (unknown !== undefined) return `spec: ${unknown}`;
  const out: { -readonly [K in keyof WafSettings]: WafSettings[K] } = defaults();
  const mode = spec.mode ?? "Enforce";
  if (mode !== "Enforce" && mode !== "DetectionOnly")
    return `spec.mode: ${JSON.stringify(mode)} must be Enforce or DetectionOnly`;
  out.mode = mode;
  const crs = object(spec.coreRuleSet, "spec.coreRuleSet", crsFields);
  if (typeof crs === "string") return crs;
  if (crs.enabled !== undefined && typeof crs.enabled !== "boolean")
    return "spec.coreRuleSet.enabled: must be true or false";
  out.coreRuleSet = crs.enabled !== false;
  const level = whole(crs.paranoiaLevel, "spec.coreRuleSet.paranoiaLevel", 1, 4);
  if (typeof level === "string") return level;
  if (level !== undefined) out.paranoiaLevel = level as WafSettings["paranoiaLevel"];
  const threshold = whole(
    crs.anomalyThreshold,
    "spec.coreRuleSet.anomalyThreshold",
    1,
    WAF_BOUNDS.inboundAnomalyThreshold,
  );
  if (typeof threshold === "string") return threshold;
  if (threshold !== undefined) out.inboundAnomalyThreshold = threshold;
  const ids = list(
    crs.excludedRuleIds,
    "spec.coreRuleSet.excludedRuleIds",
    "a rule id (a whole number)",
    (v) => (typeof v === "number" && Number.isInteger(v) && RULE_ID.test(String(v)) ? v : undefined),
  );
  if (typeof ids === "string") return ids;
  out.excludedRuleIds = ids;
  const tags = list(
    crs.excludedRuleTags,
    "spec.coreRuleSet.excludedRuleTags",
    "a rule tag (letters, digits, _./:-)",
    (v) => (typeof v === "string" && ruleTagPattern.test(v) ? v : undefined),
  );
  if (typeof tags === "string") return tags;
  out.excludedRuleTags = tags;
  const body = object(spec.requestBody, "spec.requestBody", bodyFields);
  if (typeof body === "string") return body;
  const limit = whole(body.limitBytes, "spec.requestBody.limitBytes", 0, WAF_BOUNDS.requestBodyLimitBytes);
  if (typeof limit === "string") return limit;
  if (limit !== undefined) out.requestBodyLimitBytes = limit;
  const over = body.overLimit ?? WAF_DEFAULTS.requestBodyOverLimit;
  if (over !== "Reject" && over !== "InspectPartial")
    return `spec.requestBody.overLimit: ${JSON.stringify(over)} must be Reject or InspectPartial`;
  out.requestBodyOverLimit = over;
  const args = whole(spec.maxArguments, "spec.maxArguments", 1, WAF_BOUNDS.maxArguments);
  if (typeof args === "string") return args;
  if (args !== undefined) out.maxArguments = args;
  const header = spec.transactionIdHeader;
  if (header !== undefined) {
    if (typeof header !== "string" || header.length > 64 || !isToken(header))
      return `spec.transactionIdHeader: ${JSON.stringify(header)} must be a header name (at most 64 characters)`;
    return { ...out, transactionIdHeader: header.toLowerCase() };
  }
  return out;
}

function unknownFields(o: Readonly<Record<string, unknown>>, known: readonly string[]): string | undefined {
  const unknown = Object.keys(o).filter((k) => !known.includes(k));
  return unknown.length > 0 ? `unknown field(s) ${unknown.map((k) => `"${k}"`).join(", ")}` : undefined;
}

function object(raw: unknown, at: string, known: readonly string[]): Record<string, unknown> | string {
  if (raw === undefined) return {};
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return `${at}: must be an object`;
  const unknown = unknownFields(raw as Record<string, unknown>, known);
  return unknown === undefined ? (raw as Record<string, unknown>) : `${at}: ${unknown}`;
}

function whole(raw: unknown, at: string, min: number, max: number): number | string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < min || raw > max)
    return `${at}: ${JSON.stringify(raw)} must be a whole number from ${min} to ${max}`;
  return raw;
}

function list<T>(raw: unknown, at: string, what: string, item: (v: unknown) => T | undefined): T[] | string {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > WAF_BOUNDS.excludedRules)
    return `${at}: must be a list of at most ${WAF_BOUNDS.excludedRules}`;
  const out: T[] = [];
  for (const [i, v] of raw.entries()) {
    const x = item(v);
    if (x === undefined) return `${at}[${i}]: ${JSON.stringify(v)} is not ${what}`;
    if (!out.includes(x)) out.push(x);
  }
  return out;
}
