/**
 * ingress-nginx's redirects and host names (src/translate/ingress/annotations/redirects.ts, host-edits.ts,
 * ssl-redirect.ts). Locations name the gateway's port where ingress-nginx's would name none (a test port
 * is never 80), so they are matched with the port the request went to.
 */
import { expect } from "bun:test";
import type { AnnotationCase } from "./harness.ts";

/** An https Location on the case's host (the HTTPS port is the gateway's, not known to the case). */
const httpsOn = (host: string, uri: string) =>
  new RegExp(`^https://${host.replaceAll(".", "\\.")}:\\d+${uri.replaceAll("?", "\\?")}$`);

export const cases: readonly AnnotationCase[] = [
  {
    name: "permanent-redirect: every path answers 301 to the URL, $request_uri filled in",
    covers: ["permanent-redirect"],
    annotations: { "permanent-redirect": "https://new.example$request_uri" },
    request: { path: "/a/b?x=1" },
    check(res) {
      expect([res.status, res.headers.get("location")]).toEqual([301, "https://new.example/a/b?x=1"]);
    },
  },
  {
    name: "permanent-redirect-code: the redirect answers with that code; the query is not added to a plain URL",
    covers: ["permanent-redirect", "permanent-redirect-code"],
    annotations: { "permanent-redirect": "https://new.example/landing", "permanent-redirect-code": "308" },
    request: { path: "/old?x=1" },
    check(res) {
      expect([res.status, res.headers.get("location")]).toEqual([308, "https://new.example/landing"]);
    },
  },
  {
    name: "permanent-redirect-code outside the redirect codes: refused, the redirect answers 301",
    covers: ["permanent-redirect-code"],
    annotations: { "permanent-redirect": "https://new.example/", "permanent-redirect-code": "304" },
    request: { path: "/" },
    check(res) {
      expect([res.status, res.headers.get("location")]).toEqual([301, "https://new.example/"]);
    },
  },
  {
    name: "permanent-redirect that is not an absolute http(s) URL: refused, the backend serves",
    covers: ["permanent-redirect"],
    annotations: { "permanent-redirect": "/elsewhere" },
    request: { path: "/x" },
    check(res) {
      expect([res.status, res.seen?.path]).toEqual([200, "/x"]);
    },
  },
  {
    name: "temporal-redirect: 302 by default, and it wins over permanent-redirect",
    covers: ["temporal-redirect"],
    annotations: {
      "temporal-redirect": "https://maintenance.example/",
      "permanent-redirect": "https://ignored.example/",
    },
    request: { path: "/x" },
    check(res) {
      expect([res.status, res.headers.get("location")]).toEqual([302, "https://maintenance.example/"]);
    },
  },
  {
    name: "temporal-redirect-code: the redirect answers with that code, $host and $uri filled in",
    covers: ["temporal-redirect", "temporal-redirect-code"],
    annotations: { "temporal-redirect": "https://$host.moved.example$uri", "temporal-redirect-code": "307" },
    request: { path: "/p?q=1" },
    check(res) {
      expect([res.status, res.headers.get("location")]).toEqual([
        307,
        `https://${res.caseHost}.moved.example/p`,
      ]);
    },
  },
  {
    name: "relative-redirects: Locations stay absolute, as ingress-nginx's own redirects",
    covers: ["relative-redirects"],
    annotations: { "relative-redirects": "true", "app-root": "/app" },
    request: { path: "/" },
    check(res) {
      expect([res.status, res.headers.get("location")]).toEqual([
        302,
        `http://${res.caseHost}:${res.port}/app`,
      ]);
    },
  },
  {
    name: "app-root: exactly / answers 302 to the root on the same host, the query dropped, before https",
    covers: ["app-root"],
    annotations: { "app-root": "/app", "force-ssl-redirect": "true" },
    request: { path: "/?q=1" },
    check(res) {
      expect([res.status, res.headers.get("location")]).toEqual([
        302,
        `http://${res.caseHost}:${res.port}/app`,
      ]);
    },
  },
  {
    name: "app-root: other paths are served by the Ingress",
    covers: ["app-root"],
    annotations: { "app-root": "/app" },
    request: { path: "/app/page" },
    check(res) {
      expect([res.status, res.seen?.path]).toEqual([200, "/app/page"]);
    },
  },
  {
    name: "from-to-www-redirect: www.<host> answers 308 to the host, port named, one trailing slash dropped",
    covers: ["from-to-www-redirect"],
    annotations: { "from-to-www-redirect": "true" },
    requestHost: (host) => `www.${host}`,
    request: { path: "/a/" },
    check(res) {
      expect([res.status, res.headers.get("location")]).toEqual([
        308,
        `http://${res.caseHost}:${res.port}/a`,
      ]);
    },
  },
  {
    name: "from-to-www-redirect: the query is kept, and with it the slash before it",
    covers: ["from-to-www-redirect"],
    annotations: { "from-to-www-redirect": "true" },
    requestHost: (host) => `www.${host}`,
    request: { path: "/a/?q=1" },
    check(res) {
      expect([res.status, res.headers.get("location")]).toEqual([
        308,
        `http://${res.caseHost}:${res.port}/a/?q=1`,
      ]);
    },
  },
  {
    name: "from-to-www-redirect: a www name an Ingress serves is not redirected",
    covers: ["from-to-www-redirect"],
    annotations: { "from-to-www-redirect": "true" },
    hosts: ["taken.redirects.test", "www.taken.redirects.test"],
    requestHost: "www.taken.redirects.test",
    request: { path: "/x" },
    check(res) {
      expect([res.status, res.seen?.headers.host]).toEqual([200, "www.taken.redirects.test"]);
    },
  },
  {
    name: "server-alias: the alias serves the host's routes (its name lower-cased)",
    covers: ["server-alias"],
    annotations: { "server-alias": "Alias.Redirects.Test, bad_name" },
    requestHost: "alias.redirects.test",
    request: { path: "/x" },
    check(res) {
      expect([res.status, res.seen?.path, res.seen?.headers.host]).toEqual([
        200,
        "/x",
        "alias.redirects.test",
      ]);
    },
  },
  {
    name: "server-alias: a wildcard alias serves one more label",
    covers: ["server-alias"],
    annotations: { "server-alias": "*.wild.redirects.test" },
    requestHost: "a.wild.redirects.test",
    request: { path: "/y" },
    check(res) {
      expect([res.status, res.seen?.path]).toEqual([200, "/y"]);
    },
  },
  {
    name: "preserve-trailing-slash: the https redirect keeps the trailing slash",
    covers: ["preserve-trailing-slash"],
    annotations: { "force-ssl-redirect": "true", "preserve-trailing-slash": "true" },
    request: { path: "/a/" },
    check(res) {
      expect(res.status).toBe(308);
      expect(res.headers.get("location")).toMatch(httpsOn(res.caseHost, "/a/"));
    },
  },
  {
    name: "preserve-trailing-slash unset: the https redirect drops one trailing slash, as ingress-nginx",
    covers: ["preserve-trailing-slash"],
    annotations: { "force-ssl-redirect": "true" },
    request: { path: "/a/" },
    check(res) {
      expect(res.status).toBe(308);
      expect(res.headers.get("location")).toMatch(httpsOn(res.caseHost, "/a"));
    },
  },
  {
    name: "use-port-in-redirects: the https redirect names its port",
    covers: ["use-port-in-redirects"],
    annotations: { "force-ssl-redirect": "true", "use-port-in-redirects": "true" },
    request: { path: "/a?b=c" },
    check(res) {
      expect(res.status).toBe(308);
      expect(res.headers.get("location")).toMatch(httpsOn(res.caseHost, "/a?b=c"));
    },
  },
];
