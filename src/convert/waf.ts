/**
 * An Ingress's ModSecurity annotations (`enable-modsecurity`, `enable-owasp-core-rules`,
 * `modsecurity-transaction-id`, `gatehouse.dev/waf-*`) as the spec of a WAFPolicy on its HTTPRoutes
 * (docs/waf.md), every field written out: a policy's defaults differ from the annotations' (a policy
 * enforces unless told otherwise), so nothing is left to them. Annotations that could not be read made the
 * Ingress answer 503; the policy is written with the same unreadable values, so it is Invalid and answers
 * 503 the same way, never open.
 */
import type { RouteWaf, SourceRef } from "../model/index.ts";
import type { ResourceSnapshot } from "../sources/snapshot.ts";
import { annotationOf, nameOf, namespaceOf } from "../translate/common/objects.ts";
import { GATEHOUSE_PREFIX } from "../translate/ingress/gatehouse-annotations.ts";
import { parseWafSpec } from "../translate/policies/waf-policy.ts";
import type { Findings } from "./findings.ts";

type Json = Record<string, unknown>;

/** The WAFPolicy spec (without targetRefs) of the WAF an Ingress's annotations put on its routes. */
export function wafSpec(
  waf: RouteWaf,
  ingress: SourceRef,
  snapshot: ResourceSnapshot,
  findings: Findings,
): Json {
  const spec: Json = {
    mode: waf.mode,
    coreRuleSet: {
      enabled: waf.coreRuleSet,
      paranoiaLevel: waf.paranoiaLevel,
      anomalyThreshold: waf.inboundAnomalyThreshold,
      ...(waf.excludedRuleIds.length > 0 ? { excludedRuleIds: [...waf.excludedRuleIds] } : {}),
      ...(waf.excludedRuleTags.length > 0 ? { excludedRuleTags: [...waf.excludedRuleTags] } : {}),
    },
    requestBody: { limitBytes: waf.requestBodyLimitBytes, overLimit: waf.requestBodyOverLimit },
    maxArguments: waf.maxArguments,
    ...(waf.transactionIdHeader !== undefined ? { transactionIdHeader: waf.transactionIdHeader } : {}),
  };
  if (waf.invalid === undefined) return spec;
  const ing = snapshot.ingresses.find(
    (i) => namespaceOf(i) === ingress.namespace && nameOf(i) === ingress.name,
  );
  const unread =
    ing === undefined ? spec : withRawValues(spec, (name) => annotationOf(ing, GATEHOUSE_PREFIX + name));
  const refused = typeof parseWafSpec(unread) === "string";
  findings.add(
    ingress,
    refused
      ? `${waf.invalid}: written as a WAFPolicy with the same values, which is Invalid and answers 503 as the Ingress did (the API server refuses to store it until they are fixed)`
      : `${waf.invalid}: the Ingress answered 503 on every path; the WAFPolicy written from them inspects instead`,
    refused ? "note" : "unconverted",
  );
  return unread;
}

/** `spec` with each `gatehouse.dev/waf-*` annotation the Ingress has put in its field as written. */
function withRawValues(spec: Json, raw: (name: string) => string | undefined): Json {
  const value = (text: string) => (/^[0-9]{1,15}$/.test(text.trim()) ? Number(text.trim()) : text.trim());
  const items = (text: string) => text.split(",").map(value);
  const crs = { ...(spec.coreRuleSet as Json) };
  const body = { ...(spec.requestBody as Json) };
  const out: Json = { ...spec, coreRuleSet: crs, requestBody: body };
  const set = (name: string, into: Json, field: string, convert: (text: string) => unknown) => {
    const text = raw(name);
    if (text !== undefined) into[field] = convert(text);
  };
  set("waf-mode", out, "mode", value);
  set("waf-paranoia-level", crs, "paranoiaLevel", value);
  set("waf-anomaly-threshold", crs, "anomalyThreshold", value);
  set("waf-excluded-rule-ids", crs, "excludedRuleIds", items);
  set("waf-excluded-rule-tags", crs, "excludedRuleTags", items);
  set("waf-body-limit", body, "limitBytes", value);
  set("waf-body-over-limit", body, "overLimit", value);
  set("waf-max-arguments", out, "maxArguments", value);
  return out;
}
