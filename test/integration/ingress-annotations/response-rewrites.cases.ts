/**
 * ingress-nginx's rewrites of the backend's redirects and cookies (src/translate/ingress/annotations/
 * response-rewrites.ts): the scripted backend answers with the Location, Refresh and Set-Cookie fields the
 * case asks for (`/respond-headers`), and the case checks what reaches the client.
 */
import { expect } from "bun:test";
import type { AnnotationCase } from "./harness.ts";

/** The scripted backend's path answering with these header lines, in order. */
const respond = (fields: readonly [string, string][]) =>
  `/respond-headers?${new URLSearchParams(fields).toString()}`;

const redirect = {
  "proxy-redirect-from": "http://app.internal:8080/",
  "proxy-redirect-to": "https://public.example/",
};

export const cases: readonly AnnotationCase[] = [
  {
    name: "proxy-redirect-from/-to: the Location and Refresh URL starting with -from get -to instead",
    covers: ["proxy-redirect-from", "proxy-redirect-to"],
    annotations: redirect,
    request: {
      path: respond([
        ["location", "http://app.internal:8080/login?next=%2Fa"],
        ["refresh", "5; url=http://app.internal:8080/next"],
      ]),
    },
    check(res) {
      expect([res.status, res.body]).toEqual([200, "headers"]);
      expect(res.headers.get("location")).toBe("https://public.example/login?next=%2Fa");
      expect(res.headers.get("refresh")).toBe("5; url=https://public.example/next");
    },
  },
  {
    name: "proxy-redirect-from: a Location starting otherwise (another host, a path, other case) is passed on",
    covers: ["proxy-redirect-from"],
    annotations: redirect,
    request: {
      path: respond([
        ["location", "HTTP://APP.internal:8080/x"],
        ["refresh", "1; url=/elsewhere"],
      ]),
    },
    check(res) {
      expect(res.headers.get("location")).toBe("HTTP://APP.internal:8080/x");
      expect(res.headers.get("refresh")).toBe("1; url=/elsewhere");
    },
  },
  {
    name: "proxy-redirect-to a path: the rewritten Location is relative",
    covers: ["proxy-redirect-to"],
    annotations: { "proxy-redirect-from": "http://app.internal:8080/app/", "proxy-redirect-to": "/" },
    request: { path: respond([["location", "http://app.internal:8080/app/done"]]) },
    check(res) {
      expect(res.headers.get("location")).toBe("/done");
    },
  },
  {
    name: "proxy-redirect-from without -to: nothing is rewritten (as ingress-nginx writes no proxy_redirect)",
    covers: ["proxy-redirect-from"],
    annotations: { "proxy-redirect-from": "http://app.internal:8080/" },
    request: { path: respond([["location", "http://app.internal:8080/x"]]) },
    check(res) {
      expect([res.status, res.headers.get("location")]).toEqual([200, "http://app.internal:8080/x"]);
    },
  },
  {
    name: "proxy-redirect-from on a permanent-redirect: the gateway's own redirect is not rewritten",
    covers: ["proxy-redirect-from", "proxy-redirect-to"],
    annotations: {
      "permanent-redirect": "https://moved.example/",
      "proxy-redirect-from": "https://moved.example/",
      "proxy-redirect-to": "/",
    },
    request: { path: "/" },
    check(res) {
      expect([res.status, res.headers.get("location")]).toEqual([301, "https://moved.example/"]);
    },
  },
  {
    name: "proxy-cookie-domain: each matching Set-Cookie Domain (any case, leading dot kept) is rewritten",
    covers: ["proxy-cookie-domain"],
    annotations: { "proxy-cookie-domain": "app.internal public.example" },
    request: {
      path: respond([
        ["set-cookie", "a=1; Domain=App.Internal; Path=/"],
        ["set-cookie", "b=2; domain=.app.internal; HttpOnly"],
        ["set-cookie", "c=3; Domain=sub.app.internal"],
        ["set-cookie", "d=4"],
      ]),
    },
    check(res) {
      expect(res.headers.getSetCookie()).toEqual([
        "a=1; Domain=public.example; Path=/",
        "b=2; domain=.public.example; HttpOnly",
        "c=3; Domain=sub.app.internal",
        "d=4",
      ]);
    },
  },
  {
    name: "proxy-cookie-path: a Set-Cookie Path starting with FROM gets TO in its place, others kept",
    covers: ["proxy-cookie-path"],
    annotations: { "proxy-cookie-path": "/internal/ /" },
    request: {
      path: respond([
        ["set-cookie", "s=1; Path=/internal/x; Secure"],
        ["set-cookie", "t=2; Path=/Internal/x"],
      ]),
    },
    check(res) {
      expect(res.headers.getSetCookie()).toEqual(["s=1; Path=/x; Secure", "t=2; Path=/Internal/x"]);
    },
  },
  {
    name: "proxy-cookie-domain and -path together rewrite the same cookie; Location is left alone",
    covers: ["proxy-cookie-domain", "proxy-cookie-path"],
    annotations: { "proxy-cookie-domain": "app.internal public.example", "proxy-cookie-path": "/app /" },
    request: {
      path: respond([
        ["location", "http://app.internal/app"],
        ["set-cookie", "s=1; Path=/app; Domain=app.internal"],
      ]),
    },
    check(res) {
      expect(res.headers.get("location")).toBe("http://app.internal/app");
      expect(res.headers.getSetCookie()).toEqual(["s=1; Path=/; Domain=public.example"]);
    },
  },
  {
    name: "proxy-cookie-domain in nginx's regex form: refused, cookies passed on, the Ingress served",
    covers: ["proxy-cookie-domain"],
    annotations: { "proxy-cookie-domain": "~app.internal public.example" },
    request: { path: respond([["set-cookie", "a=1; Domain=app.internal"]]) },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.headers.getSetCookie()).toEqual(["a=1; Domain=app.internal"]);
    },
  },
];
