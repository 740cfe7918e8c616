/**
 * ingress-nginx's ModSecurity annotations (internal/ingress/annotations/modsecurity), as a route's WAF
 * (model/auth.ts RouteWaf, docs/waf.md):
 * - `enable-modsecurity: "true"` → the engine runs on every path of the Ingress, in `DetectionOnly` mode
 *   as ingress-nginx's bundled modsecurity.conf sets it (`SecRuleEngine DetectionOnly`): matches are
 *   logged and counted, nothing is blocked;
 * - `enable-owasp-core-rules: "true"` → with it, the OWASP Core Rule Set is loaded (Debian's
 *   modsecurity-crs); alone it does nothing, as in ingress-nginx, and is reported;
 * - `modsecurity-transaction-id` → the engine's transaction id: `$request_id` (the X-Request-Id the request
 *   carries) or `$http_<name>` (that request header); other nginx text is reported and an id generated.
 * `modsecurity-snippet` stays refused (nginx-annotations.ts): rule text can run programs (`exec:`) and
 * switch the engine off (`ctl:`). What it was used for is here as structured fields, Gatehouse's own
 * annotations: `gatehouse.dev/waf-mode` (`Enforce` blocks), `waf-paranoia-level` (1–4),
 * `waf-anomaly-threshold`, `waf-excluded-rule-ids` and `waf-excluded-rule-tags` (comma-separated),
 * `waf-body-limit` (bytes inspected), `waf-body-over-limit` (`Reject`: 413, or `InspectPartial`) and
 * `waf-max-arguments`.
 * Never open: a value that cannot be read is reported (InvalidAnnotation) and the WAF is kept, marked
 * `invalid`, so every path of the Ingress answers 503 rather than go uninspected.
 */
import type { Route, RouteWaf } from "../../../model/index.ts";
import { ruleTagPattern } from "../../../waf/directives.ts";
import { ingressWafName } from "../../common/names.ts";
import {
  type AnnotationFamily,
  type AnnotationReader,
  goBool,
  type RouteEdit,
} from "../annotations/route-edits.ts";
import { GATEHOUSE_PREFIX } from "../gatehouse-annotations.ts";

export const MODSECURITY_ANNOTATIONS = [
  "enable-modsecurity",
  "enable-owasp-core-rules",
  "modsecurity-transaction-id",
] as const;

/** Gatehouse's own WAF annotations (without `gatehouse.dev/`), listed in nginx-annotations.ts. */
export const OWN_WAF_ANNOTATIONS = [
  "waf-mode",
  "waf-paranoia-level",
  "waf-anomaly-threshold",
  "waf-excluded-rule-ids",
  "waf-excluded-rule-tags",
  "waf-body-limit",
  "waf-body-over-limit",
  "waf-max-arguments",
] as const;

/** What ingress-nginx's modsecurity.conf and CRS set when nothing else is said. */
export const WAF_DEFAULTS = {
  mode: "DetectionOnly",
  paranoiaLevel: 1,
  inboundAnomalyThreshold: 5,
  // modsecurity.conf's SecRequestBodyNoFilesLimit, and its SecRequestBodyLimitAction Reject.
  requestBodyLimitBytes: 128 * 1024,
  requestBodyOverLimit: "Reject",
  // CRS's suggested tx.max_num_args (crs-setup.conf, rule 900300).
  maxArguments: 255,
} as const;

/** What a WAF's fields may hold, from annotations or a WAFPolicy (policies/waf-policy.ts). */
export const WAF_BOUNDS = {
  // The body is held in memory while the engine reads it.
  requestBodyLimitBytes: 16 * 1024 * 1024,
  maxArguments: 10_000,
  inboundAnomalyThreshold: 10_000,
  excludedRules: 256,
} as const;
const MAX_BODY_LIMIT = WAF_BOUNDS.requestBodyLimitBytes;
const MAX_ARGUMENTS = WAF_BOUNDS.maxArguments;
export const RULE_ID = /^[0-9]{1,9}$/;

/** Reads Gatehouse's own `gatehouse.dev/waf-*` annotations through the same reader (its `raw` takes the full key). */
function own(name: (typeof OWN_WAF_ANNOTATIONS)[number]): string {
  return GATEHOUSE_PREFIX + name;
}

export const modsecurityFamily: AnnotationFamily = {
  names: MODSECURITY_ANNOTATIONS,
  read(r): RouteEdit | undefined {
    const problems: string[] = [];
    const bad = (name: string, raw: string, why: string): undefined => {
      problems.push(`${name}: ${why}`);
      return r.bad(name, raw, why);
    };
    const enableRaw = r.raw("enable-modsecurity");
    const enable = enableRaw === undefined ? undefined : goBool(enableRaw);
    if (enableRaw !== undefined && enable === undefined)
      bad("enable-modsecurity", enableRaw, 'must be "true" or "false"; every path answers 503 (never open)');
    const crsRaw = r.raw("enable-owasp-core-rules");
    const crs = crsRaw === undefined ? false : goBool(crsRaw);
    if (crsRaw !== undefined && crs === undefined)
      bad("enable-owasp-core-rules", crsRaw, 'must be "true" or "false"');
    if (enable === false || (enable === undefined && enableRaw === undefined)) {
      if (crs === true)
        r.bad("enable-owasp-core-rules", crsRaw ?? "", 'does nothing without enable-modsecurity: "true"');
      return undefined;
    }
    const spec = {
      mode: mode(r, bad),
      coreRuleSet: crs === true,
      paranoiaLevel: (whole(r, bad, own("waf-paranoia-level"), 1, 4) ?? WAF_DEFAULTS.paranoiaLevel) as
        | 1
        | 2
        | 3
        | 4,
      inboundAnomalyThreshold:
        whole(r, bad, own("waf-anomaly-threshold"), 1, WAF_BOUNDS.inboundAnomalyThreshold) ??
        WAF_DEFAULTS.inboundAnomalyThreshold,
      excludedRuleIds: list(r, bad, own("waf-excluded-rule-ids"), RULE_ID, "a rule id (digits)").map(Number),
      excludedRuleTags: list(
        r,
        bad,
        own("waf-excluded-rule-tags"),
        ruleTagPattern,
        "a rule tag (letters, digits, _./:-)",
      ),
      requestBodyLimitBytes:
        whole(r, bad, own("waf-body-limit"), 0, MAX_BODY_LIMIT) ?? WAF_DEFAULTS.requestBodyLimitBytes,
      requestBodyOverLimit: overLimit(r, bad),
      maxArguments: whole(r, bad, own("waf-max-arguments"), 1, MAX_ARGUMENTS) ?? WAF_DEFAULTS.maxArguments,
      ...transactionId(r),
      ...(problems.length > 0
        ? { invalid: `WAF annotations could not be read (${problems.join("; ")})` }
        : {}),
    };
    // One object per Ingress, so the proxy builds one rule set for all of the Ingress's routes.
    let waf: RouteWaf | undefined;
    const perRoute = (route: Route): Route => {
      const s = route.source;
      if (waf === undefined || waf.source.namespace !== s.namespace || waf.source.name !== s.name)
        waf = { source: s, policy: ingressWafName(s.namespace, s.name), ...spec };
      return { ...route, waf };
    };
    return { perRoute };
  },
};

type Bad = (name: string, raw: string, why: string) => undefined;

function mode(r: AnnotationReader, bad: Bad): RouteWaf["mode"] {
  const raw = r.raw(own("waf-mode"));
  if (raw === undefined) return WAF_DEFAULTS.mode;
  const v = raw.trim();
  if (v === "Enforce" || v === "DetectionOnly") return v;
  bad(own("waf-mode"), raw, 'must be "Enforce" or "DetectionOnly"; every path answers 503 (never open)');
  return "Enforce";
}

function overLimit(r: AnnotationReader, bad: Bad): RouteWaf["requestBodyOverLimit"] {
  const raw = r.raw(own("waf-body-over-limit"));
  if (raw === undefined) return WAF_DEFAULTS.requestBodyOverLimit;
  const v = raw.trim();
  if (v === "Reject" || v === "InspectPartial") return v;
  bad(own("waf-body-over-limit"), raw, 'must be "Reject" or "InspectPartial"');
  return "Reject";
}

function whole(r: AnnotationReader, bad: Bad, name: string, min: number, max: number): number | undefined {
  const raw = r.raw(name);
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (!/^[0-9]{1,9}$/.test(v) || Number(v) < min || Number(v) > max)
    return bad(name, raw, `must be a whole number from ${min} to ${max}`);
  return Number(v);
}

function list(r: AnnotationReader, bad: Bad, name: string, item: RegExp, what: string): string[] {
  const raw = r.raw(name);
  if (raw === undefined || raw.trim() === "") return [];
  const out: string[] = [];
  for (const part of raw.split(",")) {
    const v = part.trim();
    if (!item.test(v)) {
      bad(name, raw, `${JSON.stringify(v.slice(0, 40))} is not ${what}`);
      return [];
    }
    if (!out.includes(v)) out.push(v);
  }
  return out;
}

/** `$request_id` → X-Request-Id; `$http_<name>` → that header; anything else is reported, not used. */
function transactionId(r: AnnotationReader): { transactionIdHeader?: string } {
  const raw = r.raw("modsecurity-transaction-id");
  if (raw === undefined) return {};
  const v = raw.trim();
  if (v === "$request_id") return { transactionIdHeader: "x-request-id" };
  const header = /^\$http_([a-z0-9_]{1,64})$/i.exec(v)?.[1];
  if (header !== undefined) return { transactionIdHeader: header.toLowerCase().replaceAll("_", "-") };
  r.bad(
    "modsecurity-transaction-id",
    raw,
    "only $request_id or $http_<name> is read here; each transaction gets a generated id",
  );
  return {};
}
