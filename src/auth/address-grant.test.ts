import { describe, expect, test } from "bun:test";
import type { RouteAuth } from "../model/index.ts";
import { addressGrant } from "./address-grant.ts";

const auth = (extra: Partial<RouteAuth>): RouteAuth => ({
  policy: { kind: "AuthPolicy", namespace: "shop", name: "staff" },
  authorization: { requiredScopes: [], requiredClaims: [] },
  claimToHeaders: [{ claim: "sub", header: "x-user" }],
  satisfy: "Any",
  ...extra,
});

describe("a request let in by its address (satisfy Any)", () => {
  test("no credentials, no claims; every header authentication writes is removed, none set", () => {
    const a = auth({
      basic: { realm: "r", users: [], usernameHeader: "x-basic-user" },
      apiKeys: {
        sources: [{ type: "Header", name: "x-api-key" }],
        keys: [],
        clientIDHeader: "x-client",
        sanitize: true,
      },
    });
    const o = addressGrant(a, "");
    expect(o.identity.via).toBe("address");
    expect(o.identity.sub).toBe("");
    expect(o.identity.claims).toEqual({});
    expect([...o.removeHeaders].sort()).toEqual([
      "authorization",
      "x-api-key",
      "x-basic-user",
      "x-client",
      "x-user",
    ]);
    expect(o.setHeaders).toEqual([]);
    expect(o.query).toBeUndefined();
    expect(addressGrant(a, "")).toBe(o); // one frozen outcome per policy
    expect(Object.isFrozen(o)).toBe(true);
  });

  test("a sanitized query key is taken out of the query, as a checked key's would be", () => {
    const a = auth({
      apiKeys: {
        sources: [{ type: "QueryParameter", name: "key" }],
        keys: [],
        clientIDHeader: "x-client",
        sanitize: true,
      },
    });
    expect(addressGrant(a, "a=1&key=k&b=2").query).toBe("?a=1&b=2");
    expect(addressGrant(a, "a=1").query).toBeUndefined();
    const kept = auth({
      apiKeys: {
        sources: [{ type: "QueryParameter", name: "key" }],
        keys: [],
        clientIDHeader: "x-client",
        sanitize: false,
      },
    });
    expect(addressGrant(kept, "key=k").query).toBeUndefined();
  });
});
