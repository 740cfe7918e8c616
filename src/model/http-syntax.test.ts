import { describe, expect, test } from "bun:test";
import { fieldValueProblem, isToken, parseHostAndPort } from "./http-syntax.ts";

/** Whether Bun's Headers takes `name: value` (it throws on what it cannot send). */
function headersTake(name: string, value: string): boolean {
  try {
    new Headers().set(name, value);
    return true;
  } catch {
    return false;
  }
}

describe("isToken", () => {
  test("RFC 9110 tokens only, never empty", () => {
    for (const ok of ["x", "X-Forwarded-For", "a!#$%&'*+-.^_`|~9"]) expect(isToken(ok)).toBe(true);
    for (const bad of ["", "example:1", "a b", "a\tb", "x-é", "{x}", 'x"', "a\r\nb"])
      expect(isToken(bad)).toBe(false);
  });

  test("whatever it accepts, Bun's Headers accepts as a name", () => {
    for (let c = 0; c < 0x100; c++) {
      const name = `x${String.fromCharCode(c)}`;
      if (isToken(name)) expect([name, headersTake(name, "v")]).toEqual([name, true]);
    }
  });
});

describe("fieldValueProblem", () => {
  test("refuses control characters but tab, DEL, and characters above U+00FF", () => {
    expect(fieldValueProblem("a\r\nb")).toContain("CR (U+000D)");
    expect(fieldValueProblem("a\nb")).toContain("LF (U+000A)");
    expect(fieldValueProblem("a\0b")).toContain("NUL (U+0000)");
    expect(fieldValueProblem("a\u0007b")).toContain("control character U+0007;");
    expect(fieldValueProblem("a\u007fb")).toContain("DEL (U+007F)");
    expect(fieldValueProblem("5 €")).toContain("contains U+20AC;");
    expect(fieldValueProblem("ok 😀")).toContain("contains U+1F600;");
  });

  test("takes tab, Latin-1, surrounding spaces and the empty value", () => {
    for (const ok of ["a\tb", "café", "\u0080\u00ff", " padded ", "", "a,b;q=0.5"])
      expect(fieldValueProblem(ok)).toBeUndefined();
  });

  test("everything Bun's Headers refuses is refused (so no rule can make it throw)", () => {
    const chars = [...Array.from({ length: 0x200 }, (_, c) => c), 0x20ac, 0xfffd, 0x1f600];
    for (const c of chars) {
      const value = `a${String.fromCodePoint(c)}b`;
      if (!headersTake("x", value)) expect([c, fieldValueProblem(value) !== undefined]).toEqual([c, true]);
    }
  });
});

describe("parseHostAndPort", () => {
  test("names, addresses and a port, split", () => {
    expect(parseHostAndPort("a.example")).toEqual({ host: "a.example", port: undefined });
    expect(parseHostAndPort("svc.ns.svc.cluster.local.:8084")).toEqual({
      host: "svc.ns.svc.cluster.local.",
      port: "8084",
    });
    expect(parseHostAndPort("10.0.0.1:0")).toEqual({ host: "10.0.0.1", port: "0" });
    expect(parseHostAndPort("[::1]:443")).toEqual({ host: "[::1]", port: "443" });
    expect(parseHostAndPort("x--y_z.a-b")).toEqual({ host: "x--y_z.a-b", port: undefined });
  });

  test("refused: empty labels, hyphens at a label's ends, userinfo, paths, long ports", () => {
    for (const bad of ["", "-a", "a-", "a.-b", "a..b", "a:", "a:123456", "u@a", "a/b", "::1", "[::1", "a b"])
      expect([bad, parseHostAndPort(bad)]).toEqual([bad, undefined]);
  });

  test("a long text is refused whole, without running the pattern over it", () => {
    const label = "a".repeat(63);
    const longest = [label, label, label, "a".repeat(61)].join(".");
    expect(parseHostAndPort(`${longest}:65535`)?.host).toBe(longest);
    const t0 = performance.now();
    expect(parseHostAndPort(`${"a-".repeat(50_000)}!`)).toBeUndefined();
    expect(parseHostAndPort(`${"a-".repeat(120)}!`)).toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(50);
  });
});
