import { describe, expect, test } from "bun:test";
import { testLimit } from "../proxy/testing/guards.ts";
import { bucketKeys, claimValue, type RateLimitContext } from "./keys.ts";

const ctx = (headers: Record<string, string> = {}, claims?: Record<string, unknown>): RateLimitContext => ({
  clientIp: "198.51.100.7",
  header: (n) => headers[n] ?? null,
  method: "GET",
  path: "/a",
  routeName: "r1",
  ...(claims ? { claims } : {}),
});

describe("bucketKeys", () => {
  test("one rule: the hash tag covers bucket and key parts, spreading clients over a cluster", () => {
    expect(bucketKeys(testLimit({ bucket: "b" }), ctx(), "198.51.100.7")).toEqual([
      "gatehouse:rl:{b|ip=198.51.100.7}:default",
    ]);
  });

  test("several rules: one tag (the bucket) so one script call can touch them all", () => {
    const limit = testLimit({
      bucket: "b",
      rules: [
        {
          name: "a",
          limit: 1,
          windowSeconds: 1,
          burst: 1,
          keys: [{ source: "Method" }, { source: "Route" }],
        },
        { name: "c", limit: 1, windowSeconds: 1, burst: 1, keys: [] },
      ],
    });
    const keys = bucketKeys(limit, ctx(), "x");
    expect(keys).toEqual(["gatehouse:rl:{b}:a|m=GET|r=r1", "gatehouse:rl:{b}:c|"]);
  });

  test("client-chosen values are hashed; a missing header or claim falls back to the client address", () => {
    const limit = testLimit({
      bucket: "b",
      rules: [
        {
          name: "k",
          limit: 1,
          windowSeconds: 1,
          burst: 1,
          keys: [
            { source: "Header", name: "x-api-key" },
            { source: "Claim", name: "sub" },
            { source: "Path" },
          ],
        },
      ],
    });
    const [withBoth] = bucketKeys(limit, ctx({ "x-api-key": "s3cr{e}t" }, { sub: "alice" }), "1.1.1.1");
    expect(withBoth).not.toContain("s3cr");
    expect(withBoth).not.toContain("alice");
    expect(withBoth?.indexOf("}")).toBe(withBoth?.lastIndexOf("}")); // no brace can move the tag
    const [missing] = bucketKeys(limit, ctx(), "1.1.1.1");
    expect(missing).toContain("h.x-api-key=~ip=1.1.1.1");
    expect(missing).toContain("c.sub=~ip=1.1.1.1");
    const [other] = bucketKeys(limit, ctx({ "x-api-key": "other" }, { sub: "alice" }), "1.1.1.1");
    expect(other).not.toBe(withBoth);
  });
});

test("claimValue reads names, dotted paths and arrays", () => {
  expect(claimValue({ sub: "a" }, "sub")).toBe("a");
  expect(claimValue({ org: { id: 7 } }, "org.id")).toBe("7");
  expect(claimValue({ "org.id": "flat" }, "org.id")).toBe("flat");
  expect(claimValue({ groups: ["x", "y"] }, "groups")).toBe("x,y");
  expect(claimValue({ sub: "" }, "sub")).toBeUndefined();
  expect(claimValue(undefined, "sub")).toBeUndefined();
});
