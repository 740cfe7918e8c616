import { describe, expect, test } from "bun:test";
import { allocateAddresses, parsePool, poolContains } from "./addresses.ts";

describe("parsePool", () => {
  test("leaves out network and broadcast", () => {
    expect(parsePool("127.0.1.0/24")).toEqual({ cidr: "127.0.1.0/24", first: 0x7f000101, size: 254 });
    expect(parsePool("10.0.0.7/32")?.size).toBe(1);
  });
  test("refuses malformed pools and IPv6", () => {
    for (const bad of ["", "10.0.0.0", "10.0.0.0/33", "::1/128", "300.0.0.0/8"])
      expect(parsePool(bad)).toBeUndefined();
  });
});

describe("allocateAddresses", () => {
  const pool = parsePool("127.0.1.0/24");
  if (!pool) throw new Error("pool");
  test("every key gets a distinct address in the pool, whatever the input order", () => {
    const keys = Array.from({ length: 50 }, (_, i) => `ns/gw-${i}`);
    const a = allocateAddresses(pool, keys);
    const b = allocateAddresses(pool, [...keys].reverse());
    expect([...a.entries()].sort()).toEqual([...b.entries()].sort());
    expect(new Set(a.values()).size).toBe(50);
    for (const ip of a.values()) expect(poolContains(pool, ip)).toBe(true);
  });
  test("adding a Gateway does not move the others (no collision)", () => {
    const before = allocateAddresses(pool, ["a/one", "a/two"]);
    const after = allocateAddresses(pool, ["a/one", "a/two", "a/three"]);
    expect(after.get("a/one")).toBe(before.get("a/one"));
    expect(after.get("a/two")).toBe(before.get("a/two"));
  });
  test("taken addresses are skipped; an exhausted pool leaves keys out", () => {
    const tiny = parsePool("10.0.0.0/31");
    if (!tiny) throw new Error("pool");
    const got = allocateAddresses(tiny, ["x/a", "x/b", "x/c"], new Set(["10.0.0.0"]));
    expect([...got.values()]).toEqual(["10.0.0.1"]);
    expect(got.size).toBe(1);
  });
});
