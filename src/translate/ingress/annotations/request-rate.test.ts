import { describe, expect, test } from "bun:test";
import type { SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { goDurationSeconds, keySources } from "./global-rate-limit.ts";
import { hasLimitAnnotation, ingressRateLimit, rateLimitAnnotationKinds } from "./request-rate.ts";

const P = "nginx.ingress.kubernetes.io/";
const ref: SourceRef = { kind: "Ingress", namespace: "shop", name: "api" };

function ingress(annotations: Record<string, string>): Ingress {
  const withPrefix = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [P + k, v]));
  return { metadata: { name: "api", namespace: "shop", annotations: withPrefix } } as unknown as Ingress;
}

describe("global-rate-limit annotations", () => {
  test("N per window, burst N, keyed by client address by default, ignored CIDRs exempt", () => {
    const found = ingressRateLimit(
      ingress({
        "global-rate-limit": "100",
        "global-rate-limit-window": "1m30s",
        "global-rate-limit-ignored-cidrs": "10.0.0.0/8, 192.168.1.1",
      }),
      ref,
    );
    expect(found.problems).toEqual([]);
    expect(found.settings).toEqual({
      rules: [{ name: "global", limit: 100, windowSeconds: 90, burst: 100, keys: [{ source: "ClientIP" }] }],
      clientIP: { trustedProxies: [] },
      exemptCIDRs: ["10.0.0.0/8", "192.168.1.1"],
      failureMode: "Local",
      shared: true,
      shadow: false,
      hideHeaders: false,
    });
  });

  test("key expressions become key sources; text between variables is dropped", () => {
    const keys = (key: string) =>
      ingressRateLimit(
        ingress({
          "global-rate-limit": "5",
          "global-rate-limit-window": "10s",
          "global-rate-limit-key": key,
        }),
        ref,
      ).settings?.rules[0]?.keys;
    expect(keys("$http_x_api_client")).toEqual([{ source: "Header", name: "x-api-client" }]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx variables, not a template
    expect(keys("${remote_addr}-${http_x_api_client}")).toEqual([
      { source: "ClientIP" },
      { source: "Header", name: "x-api-client" },
    ]);
    expect(keys("$binary_remote_addr$remote_addr")).toEqual([{ source: "ClientIP" }]);
    expect(keys("$uri$request_method")).toEqual([{ source: "Path" }, { source: "Method" }]);
    expect(keys("everyone")).toEqual([]); // no variable: one bucket for all, as ingress-nginx
    expect(keys("  ")).toEqual([{ source: "ClientIP" }]); // empty: the default
  });

  test("keySources refuses what Gatehouse cannot key by, naming the variable", () => {
    expect(keySources("$cookie_session")).toContain("$cookie_session cannot be keyed on");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx variables, not a template
    expect(keySources("${host}")).toContain("$host cannot be keyed on");
    expect(keySources("$remote_addr:$uri")).toContain("only letters, digits");
    expect(keySources("a$")).toEqual([]); // a lone $ is text
    expect(keySources("${http_x")).toEqual([]); // an unclosed ${ is text
  });

  test("Go durations as time.ParseDuration reads them", () => {
    expect(goDurationSeconds("1m")).toBe(60);
    expect(goDurationSeconds("1h30m")).toBe(5400);
    expect(goDurationSeconds("1.5s")).toBe(1.5);
    expect(goDurationSeconds(".5m")).toBe(30);
    expect(goDurationSeconds("500ms")).toBe(0.5);
    expect(goDurationSeconds("0")).toBe(0);
    expect(goDurationSeconds("+2m")).toBe(120);
    for (const bad of ["", "1", "10x", "1m5", ".s", "-1m", "1 m", "m", "1hs"])
      expect(goDurationSeconds(bad)).toBeUndefined();
  });

  test("bad or missing values fail closed, naming annotation and value", () => {
    const found = ingressRateLimit(
      ingress({
        "limit-rps": "5",
        "global-rate-limit": "0",
        "global-rate-limit-window": "500ms",
        "global-rate-limit-key": "$cookie_session",
        "global-rate-limit-ignored-cidrs": "10.0.0.0/33",
      }),
      ref,
    );
    expect(found.settings).toBeUndefined();
    expect(found.invalid).toContain(`${P}global-rate-limit: "0" must be a whole number from 1`);
    expect(found.invalid).toContain(`${P}global-rate-limit-window: "500ms" must be a Go duration of 1s`);
    expect(found.invalid).toContain(`${P}global-rate-limit-key: "$cookie_session": $cookie_session`);
    expect(found.invalid).toContain(`${P}global-rate-limit-ignored-cidrs: entry "10.0.0.0/33" is not a CIDR`);
    expect(found.problems.map((p) => [p.reason, p.severity])).toEqual(
      Array(4).fill(["InvalidAnnotation", "error"]),
    );
    const noWindow = ingressRateLimit(ingress({ "global-rate-limit": "5" }), ref);
    expect(noWindow.invalid).toContain(`${P}global-rate-limit-window: missing`);
  });

  test("without global-rate-limit the others only warn that they do nothing", () => {
    const found = ingressRateLimit(ingress({ "global-rate-limit-window": "1m" }), ref);
    expect(found.settings).toBeUndefined();
    expect(found.invalid).toBeUndefined();
    expect(found.problems).toEqual([
      expect.objectContaining({
        reason: "InvalidAnnotation",
        severity: "warning",
        message: expect.stringContaining("has no effect without"),
      }),
    ]);
  });

  test("with limit-rps: two rules; one exempt list where they agree, each rule its own where not", () => {
    const both = (allow: string, ignored: string) =>
      ingressRateLimit(
        ingress({
          "limit-rps": "10",
          "limit-allowlist": allow,
          "global-rate-limit": "600",
          "global-rate-limit-window": "1m",
          "global-rate-limit-ignored-cidrs": ignored,
        }),
        ref,
      ).settings;
    const same = both("10.0.0.0/8", "10.0.0.0/8");
    expect(same?.exemptCIDRs).toEqual(["10.0.0.0/8"]);
    expect(same?.rules.map((r) => [r.name, r.burst, r.exemptCIDRs])).toEqual([
      ["rps", 50, undefined],
      ["global", 600, undefined],
    ]);
    const differ = both("10.0.0.0/8", "192.168.0.0/16");
    expect(differ?.exemptCIDRs).toEqual([]);
    expect(differ?.rules.map((r) => [r.name, r.exemptCIDRs])).toEqual([
      ["rps", ["10.0.0.0/8"]],
      ["global", ["192.168.0.0/16"]],
    ]);
    // The allowlist alone exempts from limit-rps only, never from the global limit.
    const allowOnly = both("10.0.0.0/8", "");
    expect(allowOnly?.exemptCIDRs).toEqual([]);
    expect(allowOnly?.rules.map((r) => r.exemptCIDRs)).toEqual([["10.0.0.0/8"], undefined]);
    // Without limit-rps the allowlist asks for nothing.
    const globalOnly = ingressRateLimit(
      ingress({
        "limit-allowlist": "10.0.0.0/8",
        "global-rate-limit": "1",
        "global-rate-limit-window": "1s",
      }),
      ref,
    ).settings;
    expect(globalOnly?.exemptCIDRs).toEqual([]);
  });

  test("the annotations count as rate limit annotations (for ratelimit-policy.ts and own-guards.ts)", () => {
    expect(hasLimitAnnotation(ingress({ "global-rate-limit-key": "$uri" }))).toBe(true);
    expect(hasLimitAnnotation(ingress({ "ssl-redirect": "true" }))).toBe(false);
    expect(rateLimitAnnotationKinds(ingress({ "limit-rps": "1", "global-rate-limit": "1" }))).toEqual([
      "limit-* annotations",
      "global-rate-limit annotations",
    ]);
  });
});
