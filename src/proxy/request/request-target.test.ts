import { describe, expect, test } from "bun:test";
import { normaliseEscapes, parseRequestTarget } from "./request-target.ts";

describe("parseRequestTarget", () => {
  test("splits path and query from Bun's absolute req.url", () => {
    expect(parseRequestTarget("http://a.example:8080/x/y?q=1&r")).toEqual({ path: "/x/y", query: "?q=1&r" });
    expect(parseRequestTarget("http://a.example/")).toEqual({ path: "/", query: "" });
    expect(parseRequestTarget("http://[::1]:8080/v6")).toEqual({ path: "/v6", query: "" });
  });

  test("accepts the bare path Bun gives when the Host is unusable", () => {
    expect(parseRequestTarget("/admin?x")).toEqual({ path: "/admin", query: "?x" });
  });

  test("an authority without a path is the root", () => {
    expect(parseRequestTarget("http://a.example")).toEqual({ path: "/", query: "" });
  });

  test("a ? or / inside the query does not move the path end", () => {
    expect(parseRequestTarget("http://h/a?x=/../b?c")).toEqual({ path: "/a", query: "?x=/../b?c" });
  });

  test("refuses encoded slash, backslash, NUL, fragments and malformed escapes", () => {
    for (const p of ["/a%2Fb", "/a%2fb", "/a%5cb", "/a%5Cb", "/a%00", "/a#frag", "/a%zz", "/a%2", "/a\\b"]) {
      expect(parseRequestTarget(`http://h${p}`)).toBeUndefined();
    }
  });

  test("refuses U+FFFD (what Bun.serve makes of target bytes that are not UTF-8), in path or query", () => {
    for (const t of ["/a%EF%BF%BD", "/a%ef%bf%bd", "/a?q=x%EF%bf%BDy"])
      expect(parseRequestTarget(`http://h${t}`)).toBeUndefined();
    expect(parseRequestTarget("http://h/a%EF%BF%BC?q=%EF%BF")).toEqual({
      path: "/a%EF%BF%BC",
      query: "?q=%EF%BF",
    });
  });

  test("decodes unreserved escapes so they cannot dodge a route", () => {
    expect(parseRequestTarget("http://h/%61dmin/%7Euser")?.path).toBe("/admin/~user");
  });

  test("keeps reserved escapes, with upper-case hex", () => {
    expect(parseRequestTarget("http://h/caf%c3%a9/a%3fb")?.path).toBe("/caf%C3%A9/a%3Fb");
  });

  test("a dot segment created by decoding is refused", () => {
    expect(normaliseEscapes("/a/%2E%2e/b")).toBeUndefined();
    expect(normaliseEscapes("/a/%2e/b")).toBeUndefined();
    expect(normaliseEscapes("/a/%2ex/b")).toBe("/a/.x/b");
  });
});
