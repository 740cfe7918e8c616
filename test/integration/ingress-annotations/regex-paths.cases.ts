/** ingress-nginx's use-regex and rewrite-target (src/translate/ingress/annotations/regex-paths.ts). */
import { expect } from "bun:test";
import type { AnnotationCase } from "./harness.ts";

const something = [{ path: "/something(/|$)(.*)", pathType: "ImplementationSpecific" }];

export const cases: readonly AnnotationCase[] = [
  {
    name: "rewrite-target /$2: the backend gets the second group, the query kept (ingress-nginx's example)",
    covers: ["rewrite-target"],
    annotations: { "rewrite-target": "/$2" },
    paths: something,
    request: { path: "/something/new/x?q=1" },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.path).toBe("/new/x?q=1");
    },
  },
  {
    name: "rewrite-target /$2: the bare prefix becomes /",
    covers: ["rewrite-target"],
    annotations: { "rewrite-target": "/$2" },
    paths: something,
    request: { path: "/something" },
    check(res) {
      expect(res.seen?.path).toBe("/");
    },
  },
  {
    name: "rewrite-target: the path regex is case-insensitive (nginx ~*)",
    covers: ["rewrite-target"],
    annotations: { "rewrite-target": "/$2" },
    paths: something,
    request: { path: "/SOMETHING/Abc" },
    check(res) {
      expect(res.seen?.path).toBe("/Abc");
    },
  },
  {
    name: "rewrite-target with x-forwarded-prefix: the prefix the client saw goes upstream",
    covers: ["rewrite-target", "x-forwarded-prefix"],
    annotations: { "rewrite-target": "/$2", "x-forwarded-prefix": "/something" },
    paths: something,
    request: { path: "/something/a" },
    check(res) {
      expect(res.seen?.path).toBe("/a");
      expect(res.seen?.headers["x-forwarded-prefix"]).toBe("/something");
    },
  },
  {
    name: "use-regex: a path pattern matches from the start of the path",
    covers: ["use-regex"],
    annotations: { "use-regex": "true" },
    paths: [{ path: "/v[0-9]+/items", pathType: "ImplementationSpecific" }],
    request: { path: "/v12/items/7" },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.path).toBe("/v12/items/7");
    },
  },
  {
    name: "use-regex: a path the pattern does not take finds no route (404)",
    covers: ["use-regex"],
    annotations: { "use-regex": "true" },
    paths: [{ path: "/v[0-9]+/items", pathType: "ImplementationSpecific" }],
    request: { path: "/vx/items" },
    check(res) {
      expect(res.status).toBe(404);
      expect(res.seen).toBeUndefined();
    },
  },
  {
    name: "use-regex: a Prefix path becomes ^/path, so /foobar is taken too (as in ingress-nginx)",
    covers: ["use-regex"],
    annotations: { "use-regex": "true" },
    paths: [{ path: "/foo" }],
    request: { path: "/FOOBAR" },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.path).toBe("/FOOBAR");
    },
  },
];
