/**
 * The path index must pick exactly what a scan of the routes in order picks. Checked on random route
 * sets (every path kind, conditions, awkward prefixes like `/`, `//`, trailing slashes, values without a
 * leading slash) against random paths built from the same segments, so near-misses are common.
 */
import { describe, expect, test } from "bun:test";
import type { Route, RouteMatch } from "../../model/index.ts";
import { compile } from "../compile.ts";
import { type CompiledVirtualHost, PATH_EXACT, PATH_PREFIX, PATH_REGEX } from "../table.ts";
import { listener, match, model, route, vhost } from "../testing/model.ts";
import { buildPathIndex, PATH_INDEX_MIN } from "./path-index.ts";
import { findRoute, routeMatches } from "./routes.ts";

const direct = { kind: "DirectResponse", status: 200, body: "" } as const;
const segs = ["a", "b", "ab", "", "v1", "a.b", "%2F"];

function rng(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return (s >>> 8) % n; // the low bits of an LCG repeat quickly
  };
}

function randomPath(r: (n: number) => number): string {
  const depth = r(4);
  let p = "";
  for (let i = 0; i < depth; i++) p += `/${segs[r(segs.length)]}`;
  return p === "" || r(6) === 0 ? `${p}/` : p;
}

function randomMatch(r: (n: number) => number): RouteMatch {
  const kind = r(10);
  const method = r(5) === 0 ? (r(2) ? "GET" : "POST") : undefined;
  const header =
    r(5) === 0 ? ([{ type: "Exact", name: "x-v", value: r(2) ? "1" : "2" }] as const) : undefined;
  const extra: Partial<RouteMatch> = {
    ...(method ? { method } : {}),
    ...(header ? { headers: [...header] } : {}),
  };
  if (kind < 4) return match(randomPath(r) || "/", "Exact", extra);
  if (kind < 8) return match(r(8) === 0 ? "/" : randomPath(r) || "/", "Prefix", extra);
  if (kind === 8) return match(r(2) ? "/a/.*" : "/(v1|b)(/.*)?", "RegularExpression", extra);
  // A value without a leading slash (not valid Gateway API, but the model allows it): never indexed.
  return match(r(2) ? "a" : "(", r(2) ? "Prefix" : "RegularExpression", extra);
}

function vhOf(routes: Route[]): CompiledVirtualHost {
  const vh = compile(model([listener([vhost("*", routes)])])).listeners[0]?.hosts.any;
  if (!vh) throw new Error("no vhost");
  return vh;
}

describe("path index", () => {
  test("small hosts are scanned, larger ones indexed", () => {
    const few = Array.from({ length: PATH_INDEX_MIN - 1 }, (_, i) => route(`r${i}`, match(`/${i}`), direct));
    expect(vhOf(few).pathIndex).toBeUndefined();
    expect(vhOf([...few, route("x", match("/x"), direct)]).pathIndex).toBeDefined();
    expect(buildPathIndex([])).toBeUndefined();
  });

  test("picks what a linear scan picks, on random route sets and paths", () => {
    const r = rng(42);
    let compared = 0;
    const winners = new Set<number>();
    for (let set = 0; set < 300; set++) {
      const routes = Array.from({ length: PATH_INDEX_MIN + r(40) }, (_, i) =>
        route(`r${i}`, randomMatch(r), direct),
      );
      const vh = vhOf(routes);
      expect(vh.pathIndex).toBeDefined();
      for (let q = 0; q < 60; q++) {
        const path = q % 10 === 0 ? (["*", "", "a/b", "//", "/a//b"][q % 5] ?? "") : randomPath(r) || "/";
        const method = r(2) ? "GET" : "POST";
        const headers = new Headers(r(2) ? { "x-v": r(2) ? "1" : "2" } : {});
        const want = vh.routes.find((x) => routeMatches(x, path, method, headers, ""));
        const got = findRoute(vh, path, method, headers, "");
        expect(`${path} ${method} → ${got?.name}`).toBe(`${path} ${method} → ${want?.name}`);
        compared++;
        if (want !== undefined) winners.add(want.pathType);
      }
    }
    // Every path kind must have won somewhere, or the comparison says little.
    expect(compared).toBe(300 * 60);
    expect([...winners].sort()).toEqual([PATH_EXACT, PATH_PREFIX, PATH_REGEX]);
  });

  test("a later, longer prefix never beats an earlier, shorter one (model order is precedence)", () => {
    const routes = [
      route("short-first", match("/a"), direct),
      ...Array.from({ length: 10 }, (_, i) => route(`filler-${i}`, match(`/f${i}`), direct)),
      route("long-later", match("/a/b/c"), direct),
      route("exact-later", match("/a/b", "Exact"), direct),
    ];
    const vh = vhOf(routes);
    const find = (p: string) => findRoute(vh, p, "GET", new Headers(), "")?.name;
    expect(find("/a/b/c/d")).toBe("short-first");
    expect(find("/a/b")).toBe("short-first");
    expect(find("/f3/x")).toBe("filler-3");
    expect(find("/f33")).toBeUndefined();
  });
});
