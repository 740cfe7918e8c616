import { expect, test } from "bun:test";
import { authorize, claimHeaders } from "./authorize.ts";
import { identityFromClaims } from "./identity.ts";

const id = identityFromClaims(
  { sub: "a", scp: ["read", "write"], groups: ["ops"], org: { id: 7 }, evil: "x\r\ny: z", n: [1, 2] },
  "jwt",
);

test("required scopes and claims", () => {
  expect(authorize({ requiredScopes: ["read"], requiredClaims: [] }, id).ok).toBe(true);
  expect(authorize({ requiredScopes: ["admin", "read"], requiredClaims: [] }, id)).toEqual({
    ok: false,
    missingScopes: ["admin"],
  });
  const claim = (values: string[]) => ({ requiredScopes: [], requiredClaims: [{ name: "groups", values }] });
  expect(authorize(claim(["sre", "ops"]), id).ok).toBe(true);
  expect(authorize(claim(["sre"]), id).ok).toBe(false);
  expect(authorize({ requiredScopes: [], requiredClaims: [{ name: "org.id", values: ["7"] }] }, id).ok).toBe(
    true,
  );
});

test("claim headers: nested and arrays; header-splitting values and absent claims set nothing", () => {
  const list = ["sub", "org.id", "n", "evil", "missing", "org"].map((claim) => ({
    claim,
    header: `x-${claim}`,
  }));
  expect(claimHeaders(list, id)).toEqual([
    ["x-sub", "a"],
    ["x-org.id", "7"],
    ["x-n", "1,2"],
  ]);
});
