import { describe, expect, test } from "bun:test";
import type { Route, SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { NGINX_PREFIX } from "../annotations/nginx-annotations.ts";
import { editedRoute, readRouteEdits } from "../annotations/route-edits.ts";
import { ownGuards } from "../own-guards.ts";
import { sourceRangeFamily } from "./source-ranges.ts";

const ref: SourceRef = { kind: "Ingress", namespace: "shop", name: "web" };

function ingressWith(annotations: Record<string, string>): Ingress {
  const prefixed = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [NGINX_PREFIX + k, v]));
  return { metadata: { name: "web", namespace: "shop", annotations: prefixed } } as unknown as Ingress;
}

const route = (n: number): Route => ({
  name: `ingress/shop/web/rule/0/path/${n}`,
  source: ref,
  match: { path: { type: "Prefix", value: "/" }, headers: [], queryParams: [] },
  filters: [],
  action: { kind: "Forward", backends: [{ backendId: "shop/web:80", weight: 1, filters: [] }] },
});

function read(annotations: Record<string, string>) {
  const { edit, problems } = readRouteEdits(ingressWith(annotations), ref, [sourceRangeFamily]);
  return { ipAccess: editedRoute(route(0), edit).ipAccess, problems: problems.map((p) => p.message) };
}

describe("source-range annotations", () => {
  test("allow and deny lists, trimmed, duplicates dropped, IPv4 and IPv6", () => {
    expect(
      read({
        "allowlist-source-range": " 10.0.0.0/8, 2001:db8::/32 ,10.0.0.0/8",
        "denylist-source-range": "10.1.2.3",
      }),
    ).toEqual({
      ipAccess: [{ source: ref, allow: ["10.0.0.0/8", "2001:db8::/32"], deny: ["10.1.2.3"] }],
      problems: [],
    });
  });

  test("whitelist-source-range is read when allowlist-source-range is absent or empty", () => {
    expect(read({ "whitelist-source-range": "192.168.0.0/16" }).ipAccess?.[0]?.allow).toEqual([
      "192.168.0.0/16",
    ]);
    expect(
      read({ "allowlist-source-range": " ", "whitelist-source-range": "192.168.0.0/16" }).ipAccess?.[0]
        ?.allow,
    ).toEqual(["192.168.0.0/16"]);
  });

  test("both names: allowlist-source-range wins, a different whitelist value is reported", () => {
    const both = read({ "allowlist-source-range": "10.0.0.0/8", "whitelist-source-range": "0.0.0.0/0" });
    expect(both.ipAccess?.[0]?.allow).toEqual(["10.0.0.0/8"]);
    expect(both.problems).toEqual([
      `annotation ${NGINX_PREFIX}whitelist-source-range "0.0.0.0/0": allowlist-source-range is set too and wins (the older name is read only without it); not applied`,
    ]);
    const same = read({ "allowlist-source-range": "10.0.0.0/8", "whitelist-source-range": "10.0.0.0/8" });
    expect(same.problems).toEqual([]);
  });

  test("empty values ask for nothing", () => {
    expect(read({ "allowlist-source-range": "", "denylist-source-range": "  " })).toEqual({
      ipAccess: undefined,
      problems: [],
    });
  });

  test("a bad entry is reported with annotation and value, and the list refuses everyone (never open)", () => {
    for (const value of ["10.0.0.0/33", "garbage", "10.0.0.0/8,", "10.0.0.0/8, fe80::1%eth0"]) {
      const r = read({ "whitelist-source-range": value, "denylist-source-range": "10.9.9.9" });
      expect(r.ipAccess).toEqual([
        {
          source: ref,
          allow: [],
          deny: ["10.9.9.9"],
          invalid: "a source-range annotation could not be read",
        },
      ]);
      expect(r.problems).toHaveLength(1);
      expect(r.problems[0]).toStartWith(
        `annotation ${NGINX_PREFIX}whitelist-source-range ${JSON.stringify(value)}: `,
      );
      expect(r.problems[0]).toContain("answers 403");
    }
    expect(read({ "denylist-source-range": "1.2.3.4/99" }).ipAccess?.[0]?.invalid).toBeDefined();
  });

  test("every route of the Ingress shares one list object, after the lists it had", () => {
    const { edit } = readRouteEdits(ingressWith({ "denylist-source-range": "10.0.0.0/8" }), ref, [
      sourceRangeFamily,
    ]);
    const earlier = { source: { kind: "AuthPolicy", namespace: "shop", name: "p" }, allow: [], deny: [] };
    const a = editedRoute({ ...route(0), ipAccess: [earlier] }, edit);
    const b = editedRoute(route(1), edit);
    expect(a.ipAccess?.[0]).toBe(earlier);
    expect(a.ipAccess?.[1]).toBe(b.ipAccess?.[0]);
  });

  test("a canary's own lists count as its own access controls (it cannot apply them)", () => {
    const ingress = ingressWith({ "whitelist-source-range": "10.0.0.0/8", "denylist-source-range": "" });
    expect(ownGuards(ingress, {} as never)).toEqual([`${NGINX_PREFIX}whitelist-source-range`]);
  });
});
