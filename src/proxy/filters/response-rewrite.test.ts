import { describe, expect, test } from "bun:test";
import type { ResponseRewriteFilter } from "../../model/index.ts";
import { compile } from "../compile.ts";
import { isFastRoute } from "../raw-front/plan.ts";
import { backend, forwardTo, listener, match, model, route, vhost } from "../testing/model.ts";
import { compileResponseRewrite, rewrittenCookie, rewrittenRefresh } from "./response-rewrite.ts";

const NO_REQUEST = new Request("http://gw/");

function run(f: Omit<ResponseRewriteFilter, "kind">, init: [string, string][]): Headers {
  const h = new Headers();
  for (const [n, v] of init) h.append(n, v);
  compileResponseRewrite({ kind: "ResponseRewrite", ...f }).response?.(NO_REQUEST, h);
  return h;
}

const redirect = { from: "http://backend:8080/app/", to: "https://example.com/" };

describe("Location and Refresh (proxy_redirect)", () => {
  test("a Location starting with `from` gets `to` in its place, the rest kept", () => {
    const h = run({ redirect }, [["location", "http://backend:8080/app/login?next=%2F"]]);
    expect(h.get("location")).toBe("https://example.com/login?next=%2F");
  });

  test("a Location not starting with `from` is passed on (prefix only, case-sensitive)", () => {
    for (const v of [
      "http://other/app/x",
      "/app/x",
      "HTTP://backend:8080/app/x",
      "x http://backend:8080/app/",
    ]) {
      expect(run({ redirect }, [["location", v]]).get("location")).toBe(v);
    }
  });

  test("`to` may be a path: the Location stays relative", () => {
    const h = run({ redirect: { from: "http://backend/", to: "/" } }, [["location", "http://backend/a/b"]]);
    expect(h.get("location")).toBe("/a/b");
  });

  test("Refresh: the URL after `url=` (any case) is rewritten, the delay kept", () => {
    expect(run({ redirect }, [["refresh", "5; url=http://backend:8080/app/next"]]).get("refresh")).toBe(
      "5; url=https://example.com/next",
    );
    expect(run({ redirect }, [["refresh", "0;URL=http://backend:8080/app/"]]).get("refresh")).toBe(
      "0;URL=https://example.com/",
    );
    expect(rewrittenRefresh("5", redirect)).toBeUndefined();
    expect(rewrittenRefresh("5; url=http://elsewhere/app/", redirect)).toBeUndefined();
  });

  test("without a redirect rule Location and Refresh are untouched", () => {
    const h = run({ cookiePath: { from: "/", to: "/x/" } }, [
      ["location", "http://backend:8080/app/"],
      ["refresh", "1; url=http://backend:8080/app/"],
    ]);
    expect(h.get("location")).toBe("http://backend:8080/app/");
    expect(h.get("refresh")).toBe("1; url=http://backend:8080/app/");
  });
});

describe("Set-Cookie (proxy_cookie_domain, proxy_cookie_path)", () => {
  const cookieDomain = { from: "backend.internal", to: "example.com" };
  const cookiePath = { from: "/app/", to: "/" };

  test("each Set-Cookie line is rewritten on its own, the lines kept apart and in order", () => {
    const h = run({ cookieDomain, cookiePath }, [
      ["set-cookie", "a=1; Domain=backend.internal; Path=/app/x"],
      ["set-cookie", "b=2; Path=/other"],
      ["set-cookie", "c=3; domain=.BACKEND.Internal; HttpOnly"],
    ]);
    expect(h.getSetCookie()).toEqual([
      "a=1; Domain=example.com; Path=/x",
      "b=2; Path=/other",
      "c=3; domain=.example.com; HttpOnly",
    ]);
  });

  test("Domain is compared whole and case-insensitively; a leading dot is kept", () => {
    expect(rewrittenCookie("s=1; DOMAIN=Backend.INTERNAL", cookieDomain, undefined)).toBe(
      "s=1; DOMAIN=example.com",
    );
    expect(rewrittenCookie("s=1; Domain=.backend.internal", cookieDomain, undefined)).toBe(
      "s=1; Domain=.example.com",
    );
    expect(rewrittenCookie("s=1; Domain=sub.backend.internal", cookieDomain, undefined)).toBeUndefined();
    expect(rewrittenCookie("s=1; Domain=backend.internal.evil", cookieDomain, undefined)).toBeUndefined();
  });

  test("Path is a case-sensitive prefix", () => {
    expect(rewrittenCookie("s=1; Path=/app/deep/er", undefined, cookiePath)).toBe("s=1; Path=/deep/er");
    expect(rewrittenCookie("s=1; Path=/APP/", undefined, cookiePath)).toBeUndefined();
    expect(rewrittenCookie("s=1; Path=/ap", undefined, cookiePath)).toBeUndefined();
  });

  test("absent attributes, a cookie named like one, and a bare first part are left alone", () => {
    expect(rewrittenCookie("s=1", cookieDomain, cookiePath)).toBeUndefined();
    expect(rewrittenCookie("s=1; Secure; HttpOnly", cookieDomain, cookiePath)).toBeUndefined();
    expect(rewrittenCookie("domain=backend.internal; Secure", cookieDomain, undefined)).toBeUndefined();
    expect(rewrittenCookie("path=/app/; Secure", undefined, cookiePath)).toBeUndefined();
    expect(rewrittenCookie("bare; Path=/app/", undefined, cookiePath)).toBeUndefined();
    expect(rewrittenCookie("s=1; Path", undefined, cookiePath)).toBeUndefined();
  });

  test("a changed cookie is written back as nginx does: parts trimmed, joined with `; `", () => {
    expect(rewrittenCookie("s = v ;Path = /app/a;  Secure ;Max-Age=60", undefined, cookiePath)).toBe(
      "s=v; Path=/a; Secure; Max-Age=60",
    );
  });

  test("a response whose cookies need no change keeps its lines exactly", () => {
    const lines = ["a=1;Path=/keep", "b=2; Domain=elsewhere"];
    const h = run(
      { cookieDomain, cookiePath },
      lines.map((l) => ["set-cookie", l] as [string, string]),
    );
    expect(h.getSetCookie()).toEqual(lines);
  });

  test("without cookie rules Set-Cookie is untouched", () => {
    const h = run({ redirect }, [["set-cookie", "a=1; Domain=backend.internal; Path=/app/"]]);
    expect(h.getSetCookie()).toEqual(["a=1; Domain=backend.internal; Path=/app/"]);
  });
});

describe("on the raw front", () => {
  test("a route with a response rewrite stays on the fast path", () => {
    const rewrite: ResponseRewriteFilter = { kind: "ResponseRewrite", redirect };
    const table = compile(
      model(
        [listener([vhost("p.example", [route("rw", match("/"), forwardTo("up"), { filters: [rewrite] })])])],
        [backend("up", [1])],
      ),
    );
    const routes = table.listeners[0]?.hosts.exact.get("p.example")?.routes ?? [];
    expect(routes.map((r) => [r.name, isFastRoute(r)])).toEqual([["rw", true]]);
  });
});
