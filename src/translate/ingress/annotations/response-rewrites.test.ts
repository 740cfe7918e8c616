import { describe, expect, test } from "bun:test";
import type { Route, SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";
import { responseRewriteFamily } from "./response-rewrites.ts";
import { editedRoute, readRouteEdits } from "./route-edits.ts";

const ref: SourceRef = { kind: "Ingress", namespace: "shop", name: "web" };

const route: Route = {
  name: "ingress/shop/web/rule/0/path/0",
  source: ref,
  match: { path: { type: "Prefix", value: "/" }, headers: [], queryParams: [] },
  filters: [],
  action: { kind: "Forward", backends: [{ backendId: "shop/web:80", weight: 1, filters: [] }] },
};

/** The filters the annotations put on a forwarding route; the problems' messages. */
function applied(annotations: Record<string, string>) {
  const prefixed = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [NGINX_PREFIX + k, v]));
  const ingress = {
    metadata: { name: "web", namespace: "shop", annotations: prefixed },
  } as unknown as Ingress;
  const { edit, problems } = readRouteEdits(ingress, ref, [responseRewriteFamily]);
  return { filters: editedRoute(route, edit).filters, problems: problems.map((p) => p.message) };
}

describe("proxy-redirect-from / -to", () => {
  test("both set: one redirect rule, values trimmed", () => {
    expect(applied({ "proxy-redirect-from": " http://a/ ", "proxy-redirect-to": "https://b/" })).toEqual({
      filters: [{ kind: "ResponseRewrite", redirect: { from: "http://a/", to: "https://b/" } }],
      problems: [],
    });
  });

  test("off, default and empty ask for nothing; a -to alongside them is reported as doing nothing", () => {
    for (const from of ["off", "default", ""]) {
      expect(applied({ "proxy-redirect-from": from })).toEqual({ filters: [], problems: [] });
      const { filters, problems } = applied({ "proxy-redirect-from": from, "proxy-redirect-to": "/x" });
      expect(filters).toEqual([]);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain('proxy-redirect-to "/x"');
    }
    expect(applied({ "proxy-redirect-to": "off" })).toEqual({ filters: [], problems: [] });
  });

  test("-from without -to (or with -to off) is reported and does nothing", () => {
    const tos: Record<string, string>[] = [{}, { "proxy-redirect-to": "off" }];
    for (const to of tos) {
      const { filters, problems } = applied({ "proxy-redirect-from": "http://a/", ...to });
      expect(filters).toEqual([]);
      expect(problems.join()).toContain('proxy-redirect-from "http://a/": does nothing');
    }
  });

  test("regex forms, spaces, variables and other characters are refused by name and value", () => {
    const bad: Record<string, string>[] = [
      { "proxy-redirect-from": "~*^http://a/", "proxy-redirect-to": "/" },
      { "proxy-redirect-from": "http://a/ x", "proxy-redirect-to": "/" },
      { "proxy-redirect-from": "http://a/", "proxy-redirect-to": "https://$host/" },
      { "proxy-redirect-from": "http://a/", "proxy-redirect-to": "/a\r\nx: y" },
    ];
    for (const annotations of bad) {
      const { filters, problems } = applied(annotations);
      expect(filters).toEqual([]);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^annotation nginx\.ingress\.kubernetes\.io\/proxy-redirect-(from|to) "/);
    }
  });
});

describe("proxy-cookie-domain / -path", () => {
  test('"FROM TO" with any spaces; leading dots of domains dropped; off asks for nothing', () => {
    expect(
      applied({ "proxy-cookie-domain": ".a.internal\t .b.example", "proxy-cookie-path": "/in/ /", x: "y" }),
    ).toEqual({
      filters: [
        {
          kind: "ResponseRewrite",
          cookieDomain: { from: "a.internal", to: "b.example" },
          cookiePath: { from: "/in/", to: "/" },
        },
      ],
      problems: [],
    });
    expect(applied({ "proxy-cookie-domain": "off", "proxy-cookie-path": "off" })).toEqual({
      filters: [],
      problems: [],
    });
  });

  test("one word, three words, regex forms and foreign characters are refused; the other rule kept", () => {
    for (const bad of ["a.internal", "a b c", "~a b", "a b?c", ". b"]) {
      const { filters, problems } = applied({ "proxy-cookie-domain": bad, "proxy-cookie-path": "/a /b" });
      expect(filters).toEqual([{ kind: "ResponseRewrite", cookiePath: { from: "/a", to: "/b" } }]);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(`proxy-cookie-domain ${JSON.stringify(bad)}`);
    }
    const { problems } = applied({ "proxy-cookie-path": "~^/a /b" });
    expect(problems[0]).toContain("regular-expression form");
  });

  test("a route that answers itself (a redirect) gets no rewrite", () => {
    const prefixed = { [`${NGINX_PREFIX}proxy-cookie-path`]: "/a /b" };
    const ingress = {
      metadata: { name: "web", namespace: "shop", annotations: prefixed },
    } as unknown as Ingress;
    const { edit } = readRouteEdits(ingress, ref, [responseRewriteFamily]);
    const redirecting: Route = { ...route, action: { kind: "Redirect", statusCode: 301 } } as Route;
    expect(editedRoute(redirecting, edit).filters).toEqual([]);
  });
});
