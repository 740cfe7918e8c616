/**
 * ingress-nginx's client address lists (src/translate/ingress/access/source-ranges.ts). The cases' client
 * is 127.0.0.1, so each list includes or excludes it; a refusal is 403 problem+json and the backend sees
 * nothing (its echo would be JSON with the request).
 */
import { expect } from "bun:test";
import type { AnnotationCase, CaseResponse } from "./harness.ts";

function served(res: CaseResponse): void {
  expect([res.status, res.seen?.path]).toEqual([200, "/"]);
}

function refused(res: CaseResponse): void {
  expect([res.status, res.headers.get("content-type"), res.seen]).toEqual([
    403,
    "application/problem+json",
    undefined,
  ]);
  expect(JSON.parse(res.body)).toMatchObject({ status: 403, title: "Forbidden" });
}

const allow = "allowlist-source-range";
const white = "whitelist-source-range";
const deny = "denylist-source-range";

export const cases: readonly AnnotationCase[] = [
  {
    name: "allowlist-source-range naming the client's network: served",
    covers: [allow],
    annotations: { [allow]: "10.0.0.0/8, 127.0.0.0/8" },
    request: { path: "/" },
    check: served,
  },
  {
    name: "allowlist-source-range without the client: 403 problem+json, the backend sees nothing",
    covers: [allow],
    annotations: { [allow]: "10.0.0.0/8,::1" },
    request: { path: "/" },
    check: refused,
  },
  {
    name: "whitelist-source-range (the older name) naming the client: served",
    covers: [white],
    annotations: { [white]: "127.0.0.1/32" },
    request: { path: "/" },
    check: served,
  },
  {
    name: "whitelist-source-range without the client: 403",
    covers: [white],
    annotations: { [white]: "192.168.0.0/16" },
    request: { path: "/" },
    check: refused,
  },
  {
    name: "both names: allowlist-source-range wins over whitelist-source-range",
    covers: [allow, white],
    annotations: { [allow]: "127.0.0.1", [white]: "10.0.0.0/8" },
    request: { path: "/" },
    check: served,
  },
  {
    name: "denylist-source-range naming the client: 403",
    covers: [deny],
    annotations: { [deny]: "127.0.0.1" },
    request: { path: "/" },
    check: refused,
  },
  {
    name: "denylist-source-range naming others: served",
    covers: [deny],
    annotations: { [deny]: "10.0.0.0/8, 2001:db8::/32" },
    request: { path: "/" },
    check: served,
  },
  {
    name: "deny beats allow: a client in both lists gets 403",
    covers: [allow, deny],
    annotations: { [allow]: "127.0.0.1/32", [deny]: "127.0.0.0/8" },
    request: { path: "/" },
    check: refused,
  },
  {
    name: "a list that does not parse (10.0.0.0/33) refuses everyone, never open",
    covers: [allow],
    annotations: { [allow]: "127.0.0.0/8,10.0.0.0/33" },
    request: { path: "/" },
    check: refused,
  },
];
