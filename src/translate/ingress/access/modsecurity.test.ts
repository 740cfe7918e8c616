import { describe, expect, test } from "bun:test";
import type { Route, SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { ruleSetDirectives } from "../../../waf/directives.ts";
import { NGINX_PREFIX } from "../annotations/nginx-annotations.ts";
import { editedRoute, readRouteEdits } from "../annotations/route-edits.ts";
import { modsecurityFamily } from "./modsecurity.ts";

const ref: SourceRef = { kind: "Ingress", namespace: "shop", name: "web" };

/** Keys without a prefix are ingress-nginx's; `gatehouse.dev/…` keys are passed as they are. */
function ingressWith(annotations: Record<string, string>): Ingress {
  const keyed = Object.fromEntries(
    Object.entries(annotations).map(([k, v]) => [k.includes("/") ? k : NGINX_PREFIX + k, v]),
  );
  return { metadata: { name: "web", namespace: "shop", annotations: keyed } } as unknown as Ingress;
}

const route = (n: number): Route => ({
  name: `ingress/shop/web/rule/0/path/${n}`,
  source: ref,
  match: { path: { type: "Prefix", value: "/" }, headers: [], queryParams: [] },
  filters: [],
  action: { kind: "Forward", backends: [{ backendId: "shop/web:80", weight: 1, filters: [] }] },
});

function read(annotations: Record<string, string>) {
  const { edit, problems } = readRouteEdits(ingressWith(annotations), ref, [modsecurityFamily]);
  return {
    waf: editedRoute(route(0), edit).waf,
    second: editedRoute(route(1), edit).waf,
    problems: problems.map((p) => p.message),
  };
}

describe("ModSecurity annotations", () => {
  test("enable-modsecurity alone: detection-only with the base rules, as ingress-nginx's modsecurity.conf", () => {
    const { waf, second, problems } = read({ "enable-modsecurity": "true" });
    expect(problems).toEqual([]);
    expect(waf).toEqual({
      source: ref,
      policy: "ingress/shop/web",
      mode: "DetectionOnly",
      coreRuleSet: false,
      paranoiaLevel: 1,
      inboundAnomalyThreshold: 5,
      excludedRuleIds: [],
      excludedRuleTags: [],
      requestBodyLimitBytes: 131072,
      requestBodyOverLimit: "Reject",
      maxArguments: 255,
    });
    // One object for every route of the Ingress: the proxy builds one rule set.
    expect(second).toBe(waf as NonNullable<typeof waf>);
  });

  test("the CRS and Gatehouse's structured fields", () => {
    const { waf, problems } = read({
      "enable-modsecurity": "true",
      "enable-owasp-core-rules": "true",
      "modsecurity-transaction-id": "$request_id",
      "gatehouse.dev/waf-mode": "Enforce",
      "gatehouse.dev/waf-paranoia-level": "2",
      "gatehouse.dev/waf-anomaly-threshold": "10",
      "gatehouse.dev/waf-excluded-rule-ids": "942100, 920350,942100",
      "gatehouse.dev/waf-excluded-rule-tags": "attack-xss,paranoia-level/2",
      "gatehouse.dev/waf-body-limit": "4096",
      "gatehouse.dev/waf-body-over-limit": "InspectPartial",
      "gatehouse.dev/waf-max-arguments": "50",
    });
    expect(problems).toEqual([]);
    expect(waf).toMatchObject({
      mode: "Enforce",
      coreRuleSet: true,
      paranoiaLevel: 2,
      inboundAnomalyThreshold: 10,
      excludedRuleIds: [942100, 920350],
      excludedRuleTags: ["attack-xss", "paranoia-level/2"],
      requestBodyLimitBytes: 4096,
      requestBodyOverLimit: "InspectPartial",
      maxArguments: 50,
      transactionIdHeader: "x-request-id",
    });
    expect(
      read({ "enable-modsecurity": "true", "modsecurity-transaction-id": "$http_x_trace" }).waf
        ?.transactionIdHeader,
    ).toBe("x-trace");
  });

  test("off, or the CRS alone: no WAF (the lone CRS annotation is reported)", () => {
    expect(read({ "enable-modsecurity": "false", "enable-owasp-core-rules": "true" }).waf).toBeUndefined();
    const alone = read({ "enable-owasp-core-rules": "true" });
    expect(alone.waf).toBeUndefined();
    expect(alone.problems[0]).toContain("does nothing without enable-modsecurity");
    expect(read({}).waf).toBeUndefined();
  });

  test("never open: a value that cannot be read keeps the WAF, marked invalid (503), and says why", () => {
    const cases: Record<string, string>[] = [
      { "enable-modsecurity": "yes" },
      { "enable-modsecurity": "true", "gatehouse.dev/waf-mode": "Block" },
      { "enable-modsecurity": "true", "gatehouse.dev/waf-paranoia-level": "5" },
      { "enable-modsecurity": "true", "gatehouse.dev/waf-excluded-rule-ids": "942100,all" },
      // Rule text is no rule tag: nothing of it reaches the engine.
      { "enable-modsecurity": "true", "gatehouse.dev/waf-excluded-rule-tags": 'x"\nSecRuleEngine Off' },
      { "enable-modsecurity": "true", "gatehouse.dev/waf-body-limit": "-1" },
    ];
    for (const bad of cases) {
      const { waf, problems } = read(bad);
      expect(waf?.invalid).toBeDefined();
      expect(problems.length).toBeGreaterThan(0);
      expect(problems[0]).toContain("not applied");
    }
    const txid = read({ "enable-modsecurity": "true", "modsecurity-transaction-id": "$host-$request_id" });
    expect(txid.waf?.invalid).toBeUndefined();
    expect(txid.waf?.transactionIdHeader).toBeUndefined();
    expect(txid.problems[0]).toContain("modsecurity-transaction-id");
  });
});

describe("rule set directives", () => {
  const base = {
    coreRuleSet: true,
    paranoiaLevel: 1 as const,
    inboundAnomalyThreshold: 5,
    excludedRuleIds: [942100],
    excludedRuleTags: ["attack-sqli", 'bad"tag'],
    requestBodyLimitBytes: 1024,
    maxArguments: 10,
  };

  test("written from the fields only: settings, exclusions, and tags that need no quoting", () => {
    const text = ruleSetDirectives(base, "/rules");
    expect(text).toContain("setvar:tx.paranoia_level=1");
    expect(text).toContain("setvar:tx.inbound_anomaly_score_threshold=5");
    expect(text).toContain("Include /rules/REQUEST-*.conf");
    expect(text).toContain("SecRuleRemoveById 942100");
    expect(text).toContain('SecRuleRemoveByTag "attack-sqli"');
    expect(text).not.toContain("bad");
    expect(text).toContain("SecRequestBodyLimit 1024");
    expect(text).toContain("SecArgumentsLimit 11");
    // Responses are never handed to the engine.
    expect(text).not.toContain("RESPONSE-");
    expect(text).toContain("SecResponseBodyAccess Off");
  });

  test("without the CRS: the base rules only", () => {
    const text = ruleSetDirectives({ ...base, coreRuleSet: false }, "/rules");
    expect(text).not.toContain("Include");
    expect(text).not.toContain("SecRuleRemoveById");
  });
});
