import { describe, expect, test } from "bun:test";
import { parseIngressHost } from "./host-patterns.ts";

function message(host: string): string | undefined {
  const r = parseIngressHost(host);
  return r.ok ? undefined : r.message;
}

describe("parseIngressHost", () => {
  test("no host or an empty one matches any host", () => {
    expect(parseIngressHost(undefined)).toEqual({ ok: true, host: { hostname: "*", match: "Any" } });
    expect(parseIngressHost("")).toEqual({ ok: true, host: { hostname: "*", match: "Any" } });
  });

  test("exact and single-label names are Exact", () => {
    expect(parseIngressHost("foo.bar.com")).toEqual({
      ok: true,
      host: { hostname: "foo.bar.com", match: "Exact" },
    });
    expect(parseIngressHost("exact-path-rules")).toEqual({
      ok: true,
      host: { hostname: "exact-path-rules", match: "Exact" },
    });
  });

  test("a leading *. label is a one-label wildcard", () => {
    expect(parseIngressHost("*.foo.com")).toEqual({
      ok: true,
      host: { hostname: "*.foo.com", match: "WildcardOneLabel" },
    });
  });

  test("upper case is refused, not lower-cased", () => {
    expect(message("Foo.com")).toBe("must be lower-case");
    expect(message("*.FOO.com")).toBe("must be lower-case");
  });

  test("IP addresses are refused, v4 and v6, bracketed or not", () => {
    for (const ip of ["10.0.0.1", "::1", "2001:db8::1", "[::1]", "FE80::1"]) {
      expect(message(ip)).toBe("must be a DNS name, not an IP address");
    }
    expect(message("foo.com:80")).toBe("must be a DNS name without a port");
    // Not an IP: three numeric labels are a valid subdomain.
    expect(parseIngressHost("1.2.3").ok).toBe(true);
  });

  test("a wildcard anywhere but the whole first label is refused", () => {
    for (const h of ["foo.*.com", "*foo.com", "*", "*.", "*.*.com", "foo.com*", "f*o.com"]) {
      expect(parseIngressHost(h).ok).toBe(false);
    }
    expect(message("foo.*.com")).toContain("whole first label");
  });

  test("RFC 1123 syntax: characters, label edges, empty labels, lengths", () => {
    for (const h of ["a_b.com", "-a.com", "a-.com", "a..com", ".a.com", "a.com.", "*.-a.com", "a b.com"]) {
      expect(message(h)).toContain("RFC 1123");
    }
    expect(parseIngressHost(`${"a".repeat(63)}.com`).ok).toBe(true);
    expect(message(`${"a".repeat(64)}.com`)).toContain("63 characters");
    const long = Array.from({ length: 51 }, () => "abcd").join("."); // 254 characters
    expect(message(long)).toBe("must be no more than 253 characters");
    expect(parseIngressHost("a-b.c0.example").ok).toBe(true);
  });
});
