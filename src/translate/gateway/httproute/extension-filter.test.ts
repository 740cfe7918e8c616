import { describe, expect, test } from "bun:test";
import type { HTTPRouteFilterObject } from "../../../sources/schema/route-filter.ts";
import type { BackendContext } from "./backend-refs.ts";
import { extensionFilter } from "./extension-filter.ts";

const filterObject = (name: string, spec: Record<string, unknown>): HTTPRouteFilterObject => ({
  apiVersion: "gatehouse.dev/v1alpha1",
  kind: "HTTPRouteFilter",
  metadata: { name, namespace: "shop" },
  spec,
});

function resolve(spec: Record<string, unknown>, ref: Record<string, unknown> = {}) {
  const ctx: BackendContext = {
    index: {
      services: new Map(),
      slicesByService: new Map(),
      routeFilters: new Map([["shop/f", filterObject("f", spec)]]),
    },
    grants: [],
    namespace: "shop",
  };
  return extensionFilter(
    { group: "gatehouse.dev", kind: "HTTPRouteFilter", name: "f", ...ref },
    "spec.rules[0].filters[0].extensionRef",
    ctx,
    { prefixMatch: false },
  );
}

const message = (r: ReturnType<typeof resolve>) => ("message" in r ? r.message : undefined);

describe("HTTPRouteFilter specs that are refused, naming the field", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["an unknown field", { urlRewrite: { hostnme: "a" } }, "spec.urlRewrite: unknown field(s) hostnme"],
    ["two blocks", { urlRewrite: {}, cors: {} }, "must set exactly one of urlRewrite"],
    ["no block", {}, "(it sets 0)"],
    [
      "a location beside a scheme",
      { requestRedirect: { location: "https://a.example/", scheme: "https" } },
      "requestRedirect.location is the whole Location",
    ],
    [
      "a variable Gatehouse does not fill",
      { requestRedirect: { location: "https://$remote_addr/" } },
      "$remote_addr is not one of the variables",
    ],
    [
      "a $ that is not a group",
      {
        urlRewrite: {
          path: { type: "ReplaceRegexMatch", replaceRegexMatch: { pattern: "/(.*)", substitution: "/$x" } },
        },
      },
      'may hold "$" only as $1 to $9',
    ],
    [
      "a pattern the engine refuses",
      {
        urlRewrite: {
          path: { type: "ReplaceRegexMatch", replaceRegexMatch: { pattern: "/(a)\\1", substitution: "/" } },
        },
      },
      "must not use backreferences",
    ],
    [
      "an empty response rewrite",
      { responseRewrite: {} },
      "sets none of location, cookieDomain and cookiePath",
    ],
    [
      "a header value that cannot be sent",
      { responseRewrite: { location: { from: "http://a/", to: "http://b/\r\nX: 1" } } },
      "responseRewrite.location.to",
    ],
    ["a host with a bad port", { urlRewrite: { hostname: "a.example:99999" } }, "is not a valid hostname"],
  ];
  for (const [what, spec, expected] of cases)
    test(what, () => {
      const r = resolve(spec);
      expect("reason" in r && r.reason).toBe("UnsupportedValue");
      expect(message(r)).toContain("HTTPRouteFilter shop/f: spec.");
      expect(message(r)).toContain(expected);
    });
});

describe("references that resolve nothing answer 500", () => {
  test("another kind is InvalidKind", () => {
    const r = resolve({ cors: {} }, { group: "example.com", kind: "Thing" });
    expect("issue" in r && r.issue.reason).toBe("InvalidKind");
  });
  test("a filter that does not exist is BackendNotFound", () => {
    const r = resolve({ cors: {} }, { name: "g" });
    expect("issue" in r && r.issue.message).toContain(
      "HTTPRouteFilter shop/g not found; the rule answers 500",
    );
  });
});

test("a valid spec: ReplaceRegexMatch with (?i) is the model's case-insensitive RegexSubstitute", () => {
  const r = resolve({
    urlRewrite: {
      hostname: "api.internal:8080",
      path: {
        type: "ReplaceRegexMatch",
        replaceRegexMatch: { pattern: "(?i)/API/(.*)", substitution: "/$1" },
      },
    },
  });
  expect("filter" in r ? r.filter : r).toEqual({
    kind: "URLRewrite",
    hostname: "api.internal:8080",
    path: { type: "RegexSubstitute", value: "/$1", pattern: "/API/(.*)", ignoreCase: true },
  });
});
