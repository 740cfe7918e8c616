import { describe, expect, test } from "bun:test";
import { cidrSet, clientAddress, inSet, parseCidr } from "./client-ip.ts";

describe("clientAddress", () => {
  const trusted = cidrSet(["10.0.0.0/8", "fd00::/8"]);

  test("a forged X-Forwarded-For from an untrusted peer is ignored", () => {
    expect(clientAddress("203.0.113.9", "1.2.3.4", trusted)).toBe("203.0.113.9");
    expect(clientAddress("203.0.113.9", "1.2.3.4", undefined)).toBe("203.0.113.9");
  });

  test("trusted proxies are walked right to left until the first untrusted hop", () => {
    expect(clientAddress("10.0.0.1", "1.2.3.4", trusted)).toBe("1.2.3.4");
    // The client prepended a forged entry; the proxies appended the real one.
    expect(clientAddress("10.0.0.1", "6.6.6.6, 1.2.3.4, 10.0.0.7", trusted)).toBe("1.2.3.4");
    expect(clientAddress("fd00::1", "2001:db8::5", trusted)).toBe("2001:db8::5");
  });

  test("garbage makes the client unknown, never the proxy; all-trusted chains end at the left-most", () => {
    expect(clientAddress("10.0.0.1", "not-an-ip", trusted)).toBe("");
    expect(clientAddress("10.0.0.1", "1.2.3.4, junk, 10.0.0.7", trusted)).toBe("");
    // Garbage left of the first untrusted hop is never read.
    expect(clientAddress("10.0.0.1", "junk, 1.2.3.4", trusted)).toBe("1.2.3.4");
    expect(clientAddress("10.0.0.1", "10.0.0.3, 10.0.0.2", trusted)).toBe("10.0.0.3");
  });

  test("ports, brackets and IPv4-mapped IPv6 are normalised", () => {
    expect(clientAddress("::ffff:198.51.100.7", null, undefined)).toBe("198.51.100.7");
    expect(clientAddress("10.0.0.1", "198.51.100.7:5555", trusted)).toBe("198.51.100.7");
    expect(clientAddress("10.0.0.1", "[2001:db8::1]:443", trusted)).toBe("2001:db8::1");
  });
});

test("CIDR parsing and membership", () => {
  expect(parseCidr("10.0.0.0/33")).toBeUndefined();
  // One grammar with AuthPolicy address lists (model/ip-ranges.ts): no zero-padded prefix lengths.
  for (const bad of ["10.0.0.0/08", "10.0.0.0/008", "2001:db8::/032", "10.0.0.0/", "10.0.0.0/8/8"])
    expect([bad, parseCidr(bad)]).toEqual([bad, undefined]);
  expect(parseCidr(" 10.0.0.0/8 ")).toEqual({ address: "10.0.0.0", prefix: 8, family: "ipv4" });
  expect(parseCidr("0.0.0.0/0")).toEqual({ address: "0.0.0.0", prefix: 0, family: "ipv4" });
  expect(parseCidr("2001:db8::/32")).toEqual({ address: "2001:db8::", prefix: 32, family: "ipv6" });
  expect(parseCidr("nope")).toBeUndefined();
  expect(parseCidr("192.168.1.1")).toEqual({ address: "192.168.1.1", prefix: 32, family: "ipv4" });
  const set = cidrSet(["192.168.0.0/16"]);
  expect(inSet(set, "192.168.4.4")).toBe(true);
  expect(inSet(set, "192.169.0.1")).toBe(false);
  expect(inSet(undefined, "192.168.4.4")).toBe(false);
});
