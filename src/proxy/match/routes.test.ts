import { describe, expect, test } from "bun:test";
import type { Route } from "../../model/index.ts";
import { compile } from "../compile.ts";
import { listener, match, model, route, vhost } from "../testing/model.ts";
import { findRoute, prefixMatches } from "./routes.ts";

const direct = (body: string) => ({ kind: "DirectResponse", status: 200, body }) as const;

function finder(routes: Route[], indexed = false) {
  const vh = compile(model([listener([vhost("*", routes)])])).listeners[0]?.hosts.any;
  if (!vh) throw new Error("no vhost");
  expect(vh.pathIndex !== undefined).toBe(indexed);
  return (path: string, init: { method?: string; headers?: Record<string, string>; query?: string } = {}) =>
    findRoute(vh, path, init.method ?? "GET", new Headers(init.headers), init.query ?? "")?.name;
}

describe("prefixMatches", () => {
  test("is element-wise", () => {
    expect(prefixMatches("/foo", "/foo")).toBe(true);
    expect(prefixMatches("/foo", "/foo/")).toBe(true);
    expect(prefixMatches("/foo", "/foo/x")).toBe(true);
    expect(prefixMatches("/foo", "/foobar")).toBe(false);
    expect(prefixMatches("", "/anything")).toBe(true);
  });
});

describe("findRoute", () => {
  test("a prefix with a trailing slash behaves as without", () => {
    const find = finder([route("p", match("/foo/"), direct("p"))]);
    expect(find("/foo")).toBe("p");
    expect(find("/foo/x")).toBe("p");
    expect(find("/foobar")).toBeUndefined();
  });

  test("exact is exact, trailing slash significant", () => {
    const find = finder([route("e", match("/a", "Exact"), direct("e"))]);
    expect(find("/a")).toBe("e");
    expect(find("/a/")).toBeUndefined();
  });

  test("regex is anchored", () => {
    const find = finder([route("r", match("/v[0-9]+", "RegularExpression"), direct("r"))]);
    expect(find("/v12")).toBe("r");
    expect(find("/v12/x")).toBeUndefined();
    expect(find("/x/v12")).toBeUndefined();
  });

  test("routes are tried in model order", () => {
    const find = finder([
      route("first", match("/a"), direct("1")),
      route("second", match("/a/b", "Exact"), direct("2")),
    ]);
    expect(find("/a/b")).toBe("first");
  });

  test("method, header and query conditions must all hold", () => {
    const find = finder([
      route(
        "cond",
        match("/", "Prefix", {
          method: "POST",
          headers: [
            { type: "Exact", name: "x-env", value: "canary" },
            { type: "RegularExpression", name: "x-ver", value: "v[12]" },
          ],
          queryParams: [{ type: "Exact", name: "mode", value: "a b" }],
        }),
        direct("c"),
      ),
      route("fallback", match("/"), direct("f")),
    ]);
    const ok = {
      method: "POST",
      headers: { "x-env": "canary", "x-ver": "v2" },
      query: "?x=1&mode=a+b&mode=z",
    };
    expect(find("/", ok)).toBe("cond");
    expect(find("/", { ...ok, method: "GET" })).toBe("fallback");
    expect(find("/", { ...ok, headers: { "x-env": "Canary", "x-ver": "v2" } })).toBe("fallback");
    expect(find("/", { ...ok, headers: { "x-env": "canary", "x-ver": "v21" } })).toBe("fallback");
    expect(find("/", { ...ok, query: "?mode=z&mode=a+b" })).toBe("fallback");
    expect(find("/", { ...ok, query: "" })).toBe("fallback");
  });

  test("the path index keeps precedence across route kinds", () => {
    const routes: Route[] = [];
    for (let i = 0; i < 20; i++) routes.push(route(`exact-${i}`, match(`/e/${i}`, "Exact"), direct("e")));
    routes.splice(5, 0, route("prefix-before", match("/e/7"), direct("p")));
    routes.push(route("exact-dup", match("/e/3", "Exact"), direct("d")));
    routes.push(route("tail", match("/"), direct("t")));
    const find = finder(routes, true);
    expect(find("/e/3")).toBe("exact-3");
    expect(find("/e/7")).toBe("prefix-before");
    expect(find("/e/7/x")).toBe("prefix-before");
    expect(find("/e/19")).toBe("exact-19");
    expect(find("/nope")).toBe("tail");
    expect(find("/e/3", { method: "GET", headers: {} })).toBe("exact-3");
  });

  test("a route whose regex does not compile never matches, and compile says so", () => {
    const t = compile(
      model([listener([vhost("*", [route("bad", match("/(", "RegularExpression"), direct("b"))])])]),
    );
    expect(t.warnings.join()).toContain("bad");
    const vh = t.listeners[0]?.hosts.any;
    if (!vh) throw new Error("no vhost");
    expect(findRoute(vh, "/(", "GET", new Headers(), "")).toBeUndefined();
  });
});
