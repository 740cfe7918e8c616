import { describe, expect, test } from "bun:test";
import type { HostPattern } from "../common/host-patterns.ts";
import type { ListenerPlan } from "./listeners.ts";
import type { Attachment, ParentResult } from "./route-attachment.ts";
import { type AttachedHTTPRoute, refuseKindConflicts } from "./route-kind-conflicts.ts";

const plan = (name: string) => ({ name }) as ListenerPlan;
const host = (hostname: string): HostPattern =>
  hostname === "*"
    ? { hostname, match: "Any" }
    : { hostname, match: hostname.startsWith("*.") ? "WildcardAnyLabels" : "Exact" };
const attach = (listener: string, ...hosts: string[]): Attachment => ({
  plan: plan(listener),
  hosts: hosts.map(host),
});
const parent = (...attachments: Attachment[]): ParentResult => ({
  parentRef: { name: "gw" },
  gatewayKey: "ns/gw",
  accepted: { ok: true },
  attachments,
});
const route = (
  kind: AttachedHTTPRoute["kind"],
  name: string,
  createdMs: number | undefined,
  ...parents: ParentResult[]
): AttachedHTTPRoute => ({
  kind,
  ref: { namespace: "ns", name },
  order: { namespace: "ns", name, createdMs },
  parents,
});

describe("an HTTPRoute and a GRPCRoute on one listener hostname", () => {
  test("the older keeps the listener; the newer loses only that listener and stays accepted elsewhere", () => {
    const http = route("HTTPRoute", "web", 1, parent(attach("a", "api.example.com")));
    const grpc = route(
      "GRPCRoute",
      "rpc",
      2,
      parent(attach("a", "api.example.com"), attach("b", "api.example.com")),
    );
    const [httpParents, grpcParents] = refuseKindConflicts([http, grpc]);
    expect(httpParents).toEqual([...http.parents]);
    expect(grpcParents?.[0]?.accepted).toEqual({ ok: true });
    expect(grpcParents?.[0]?.attachments.map((a) => a.plan.name)).toEqual(["b"]);
  });

  test("no listener left: Accepted False NotAllowedByListeners, naming the winner", () => {
    const grpc = route("GRPCRoute", "rpc", 1, parent(attach("a", "*")));
    const http = route("HTTPRoute", "web", 2, parent(attach("a", "*.example.com")));
    const [httpParents] = refuseKindConflicts([http, grpc]);
    expect(httpParents?.[0]?.attachments).toEqual([]);
    expect(httpParents?.[0]?.accepted).toMatchObject({ ok: false, reason: "NotAllowedByListeners" });
    expect(JSON.stringify(httpParents?.[0]?.accepted)).toContain("GRPCRoute ns/rpc");
  });

  test("same age: first by namespace/name; disjoint hostnames and routes of one kind share", () => {
    const b = route("HTTPRoute", "b", undefined, parent(attach("a", "x.example.com")));
    const a = route("GRPCRoute", "a", undefined, parent(attach("a", "x.example.com")));
    const other = route("GRPCRoute", "c", undefined, parent(attach("a", "y.example.com")));
    const same = route("GRPCRoute", "d", undefined, parent(attach("a", "x.example.com")));
    const [bp, ap, cp, dp] = refuseKindConflicts([b, a, other, same]);
    expect(bp?.[0]?.accepted.ok).toBe(false);
    expect([ap, cp, dp].map((p) => p?.[0]?.accepted.ok)).toEqual([true, true, true]);
  });
});
