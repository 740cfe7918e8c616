import { describe, expect, test } from "bun:test";
import type { HostPattern } from "../common/host-patterns.ts";
import { intersectHostnames, parseGatewayHostname } from "./gateway-hostnames.ts";

const h = (name: string): HostPattern => {
  const r = parseGatewayHostname(name);
  if (!r.ok) throw new Error(r.message);
  return r.host;
};
const meet = (a?: string, b?: string) =>
  intersectHostnames(a ? h(a) : undefined, b ? h(b) : undefined)?.hostname ?? null;

describe("parseGatewayHostname", () => {
  test("wildcards match any number of labels", () => {
    expect(h("*.foo.com").match).toBe("WildcardAnyLabels");
    expect(h("foo.com").match).toBe("Exact");
  });
  test("refuses IPs, misplaced wildcards, upper case and empty", () => {
    for (const bad of ["10.0.0.1", "foo.*.com", "*foo.com", "Foo.com", "", "*", "a..b"]) {
      expect(parseGatewayHostname(bad).ok).toBe(false);
    }
  });
});

describe("intersectHostnames", () => {
  test("absent on either side", () => {
    expect(meet()).toBe("*");
    expect(meet(undefined, "a.com")).toBe("a.com");
    expect(meet("a.com", undefined)).toBe("a.com");
  });
  test("exact against exact", () => {
    expect(meet("a.com", "a.com")).toBe("a.com");
    expect(meet("a.com", "b.com")).toBeNull();
  });
  test("exact against wildcard, either way round, one or more labels", () => {
    expect(meet("x.a.com", "*.a.com")).toBe("x.a.com");
    expect(meet("*.a.com", "y.x.a.com")).toBe("y.x.a.com");
    expect(meet("*.a.com", "a.com")).toBeNull();
    expect(meet("*.a.com", "xa.com")).toBeNull();
  });
  test("wildcard against wildcard keeps the more specific", () => {
    expect(meet("*.a.com", "*.a.com")).toBe("*.a.com");
    expect(meet("*.a.com", "*.x.a.com")).toBe("*.x.a.com");
    expect(meet("*.x.a.com", "*.a.com")).toBe("*.x.a.com");
    expect(meet("*.a.com", "*.b.com")).toBeNull();
  });
});
