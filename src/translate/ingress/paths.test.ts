import { describe, expect, test } from "bun:test";
import { parseIngressPath } from "./paths.ts";

const ok = (type: "Exact" | "Prefix", value: string) => ({ ok: true, path: { type, value } }) as const;

describe("parseIngressPath", () => {
  test("Exact keeps the path as written, trailing slash included", () => {
    expect(parseIngressPath("Exact", "/foo")).toEqual(ok("Exact", "/foo"));
    expect(parseIngressPath("Exact", "/foo/")).toEqual(ok("Exact", "/foo/"));
  });

  test("Exact needs a path", () => {
    expect(parseIngressPath("Exact", undefined)).toEqual({
      ok: false,
      message: "required when pathType is Exact",
    });
    expect(parseIngressPath("Exact", "").ok).toBe(false);
  });

  test("Prefix drops a trailing slash, keeps /, and defaults to /", () => {
    expect(parseIngressPath("Prefix", "/foo/")).toEqual(ok("Prefix", "/foo"));
    expect(parseIngressPath("Prefix", "/")).toEqual(ok("Prefix", "/"));
    expect(parseIngressPath("Prefix", undefined)).toEqual(ok("Prefix", "/"));
  });

  test("ImplementationSpecific is a Prefix, regex characters included literally", () => {
    expect(parseIngressPath("ImplementationSpecific", "/a/b//")).toEqual(ok("Prefix", "/a/b"));
    expect(parseIngressPath("ImplementationSpecific", undefined)).toEqual(ok("Prefix", "/"));
    expect(parseIngressPath("ImplementationSpecific", "/v1(/|$)(.*)")).toEqual(ok("Prefix", "/v1(/|$)(.*)"));
    expect(parseIngressPath("ImplementationSpecific", "api").ok).toBe(false);
  });

  test("relative paths are refused for every type", () => {
    for (const t of ["Exact", "Prefix", "ImplementationSpecific"]) {
      const r = parseIngressPath(t, "foo");
      expect(r.ok ? "" : r.message).toContain("absolute");
    }
  });

  test("Exact and Prefix refuse what the API server refuses", () => {
    for (const t of ["Exact", "Prefix"]) {
      for (const p of ["/a//b", "/a/./b", "/a/../b", "/a%2fb", "/a%2Fb", "/a/..", "/a/."]) {
        expect(parseIngressPath(t, p).ok).toBe(false);
      }
    }
    expect(parseIngressPath("Prefix", "/a.b/c..d").ok).toBe(true);
  });

  test("an unknown pathType is refused", () => {
    expect(parseIngressPath("prefix", "/").ok).toBe(false);
  });
});
