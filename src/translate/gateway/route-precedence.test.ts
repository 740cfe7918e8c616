import { expect, test } from "bun:test";
import type { RouteMatch } from "../../model/index.ts";
import { compareGatewayRoutes, type GatewayRouteOrder } from "./route-precedence.ts";

const m = (path: RouteMatch["path"], extra: Partial<RouteMatch> = {}): RouteMatch => ({
  path,
  headers: [],
  queryParams: [],
  ...extra,
});
const entry = (
  label: string,
  match: RouteMatch,
  name = "r",
  created?: number,
  ruleIndex = 0,
  matchIndex = 0,
) => ({
  label,
  match,
  source: { namespace: "ns", name, createdMs: created },
  ruleIndex,
  matchIndex,
});
const sorted = (xs: (GatewayRouteOrder & { label: string })[]) =>
  [...xs].sort(compareGatewayRoutes).map((x) => x.label);

test("exact before the longest prefix before shorter prefixes before regexes", () => {
  expect(
    sorted([
      entry("prefix /", m({ type: "Prefix", value: "/" })),
      entry("regex", m({ type: "RegularExpression", value: "/a.*" })),
      entry("prefix /a/b", m({ type: "Prefix", value: "/a/b" })),
      entry("exact /a", m({ type: "Exact", value: "/a" })),
    ]),
  ).toEqual(["exact /a", "prefix /a/b", "prefix /", "regex"]);
});

test("method, then header count, then query count", () => {
  const h = { type: "Exact" as const, name: "x", value: "1" };
  const p = { type: "Prefix" as const, value: "/" };
  expect(
    sorted([
      entry("plain", m(p)),
      entry("query", m(p, { queryParams: [h] })),
      entry("two headers", m(p, { headers: [h, { ...h, name: "y" }] })),
      entry("one header", m(p, { headers: [h] })),
      entry("method", m(p, { method: "GET" })),
    ]),
  ).toEqual(["method", "two headers", "one header", "query", "plain"]);
});

test("ties: oldest route, then namespace/name, then rule and match order", () => {
  const p = m({ type: "Prefix", value: "/" });
  expect(
    sorted([
      entry("b untimed", p, "b"),
      entry("a untimed", p, "a"),
      entry("z new", p, "z", 2000),
      entry("z old rule 1", p, "z-old", 1000, 1),
      entry("z old rule 0 match 1", p, "z-old", 1000, 0, 1),
      entry("z old rule 0 match 0", p, "z-old", 1000, 0, 0),
    ]),
  ).toEqual([
    "z old rule 0 match 0",
    "z old rule 0 match 1",
    "z old rule 1",
    "z new",
    "a untimed",
    "b untimed",
  ]);
});
