import { describe, expect, test } from "bun:test";
import type { IPAccessList } from "../model/index.ts";
import {
  compileIPAccess,
  hasAllowList,
  IP_ALLOWED,
  IP_OUTSIDE,
  IP_PASSED,
  IP_REFUSED,
  ipAdmitted,
  ipRefused,
  ipVerdict,
} from "./ip-access.ts";

const source = { kind: "Ingress", namespace: "shop", name: "web" } as const;
const list = (allow: string[], deny: string[], invalid?: string): IPAccessList => ({
  source,
  allow,
  deny,
  ...(invalid !== undefined ? { invalid } : {}),
});

describe("client address lists", () => {
  test("no lists: nothing to check", () => {
    expect(compileIPAccess(undefined)).toBeUndefined();
    expect(compileIPAccess([])).toBeUndefined();
  });

  test("deny first, then a non-empty allow list; IPv4-mapped clients are IPv4", () => {
    const a = compileIPAccess([list(["10.0.0.0/8", "fd00::/8"], ["10.6.0.0/16"])]);
    if (a === undefined) throw new Error("compiled nothing");
    expect(ipAdmitted(a, "10.1.2.3")).toBe(true);
    expect(ipAdmitted(a, "::ffff:10.1.2.3")).toBe(true);
    expect(ipAdmitted(a, "10.6.1.1")).toBe(false);
    expect(ipAdmitted(a, "::ffff:10.6.1.1")).toBe(false);
    expect(ipAdmitted(a, "fd12::1")).toBe(true);
    expect(ipAdmitted(a, "11.0.0.1")).toBe(false);
    const denyOnly = compileIPAccess([list([], ["10.0.0.0/8"])]);
    expect(denyOnly && ipAdmitted(denyOnly, "192.0.2.1")).toBe(true);
  });

  test("never open: an unreadable client address, or a list marked invalid, is refused", () => {
    const denyOnly = compileIPAccess([list([], ["10.0.0.0/8"])]);
    for (const ip of ["", "unix:/x", "1.2.3.4:80", "[::1]"])
      expect(denyOnly && ipAdmitted(denyOnly, ip)).toBe(false);
    const invalid = compileIPAccess([list(["0.0.0.0/0"], [], "could not be read")]);
    expect(invalid && ipAdmitted(invalid, "1.2.3.4")).toBe(false);
  });

  test("verdicts for satisfy Any: inside every allow list is a grant, outside one is not, deny beats both", () => {
    const levels = compileIPAccess([
      list(["10.0.0.0/8"], []),
      list([], ["10.9.0.0/16"]),
      list(["10.1.0.0/16", "10.9.0.0/16"], []),
    ]);
    if (levels === undefined) throw new Error("compiled nothing");
    expect(ipVerdict(levels, "10.1.2.3")).toBe(IP_ALLOWED);
    expect(ipVerdict(levels, "10.2.0.1")).toBe(IP_OUTSIDE); // inside the first, outside the third
    expect(ipVerdict(levels, "192.0.2.1")).toBe(IP_OUTSIDE);
    expect(ipVerdict(levels, "10.9.0.1")).toBe(IP_REFUSED); // allowed by two lists, denied by one
    const denyOnly = compileIPAccess([list([], ["10.0.0.0/8"])]);
    expect(denyOnly && ipVerdict(denyOnly, "192.0.2.1")).toBe(IP_PASSED);
    expect(hasAllowList(denyOnly)).toBe(false);
    expect(hasAllowList(levels)).toBe(true);
    expect(hasAllowList(undefined)).toBe(false);
    const invalid = compileIPAccess([list(["0.0.0.0/0"], [], "could not be read")]);
    expect(invalid && ipVerdict(invalid, "1.2.3.4")).toBe(IP_REFUSED);
    expect(ipVerdict(levels, "not an address")).toBe(IP_REFUSED);
  });

  test("lists are compiled once per model list, whatever routes share it", () => {
    const shared = list(["10.0.0.0/8"], []);
    expect(compileIPAccess([shared])?.[0]).toBe(compileIPAccess([shared])?.[0] as never);
  });

  test("the refusal: 403 problem+json naming no list entry", async () => {
    const res = ipRefused("gatehouse");
    expect([res.status, res.headers.get("content-type"), res.headers.get("server")]).toEqual([
      403,
      "application/problem+json",
      "gatehouse",
    ]);
    expect(await res.json()).toEqual({
      type: "about:blank",
      title: "Forbidden",
      status: 403,
      detail: "The client address is not allowed to use this route.",
    });
  });
});
