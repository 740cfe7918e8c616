import { expect, test } from "bun:test";
import type { Backend, GatewayModel, Problem } from "../../../model/index.ts";
import { assemble, mergeFile } from "../../../sources/file/assemble.ts";
import { parseFileText } from "../../../sources/file/documents.ts";
import type { ObjectStatus } from "../../../status/types.ts";
import { translate } from "../../translate.ts";

const base = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: gatehouse }
spec: { controllerName: gatehouse.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: default }
spec:
  gatewayClassName: gatehouse
  listeners:
    - { name: http, protocol: HTTP, port: 8080 }
    - { name: other, protocol: HTTP, port: 8081 }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: a, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  hostnames: [a.example.com]
  rules:
    - name: main
      backendRefs: [{ name: web, port: 80 }]
    - name: api
      matches: [{ path: { type: PathPrefix, value: /api } }]
      backendRefs: [{ name: api, port: 80 }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: b, namespace: default }
spec:
  parentRefs: [{ name: gw, sectionName: http }]
  hostnames: [b.example.com]
  rules: [{ backendRefs: [{ name: web, port: 80 }] }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: orphan, namespace: default }
spec:
  parentRefs: [{ name: no-such-gateway }]
  rules: [{ backendRefs: [{ name: web, port: 80 }] }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: { name: g, namespace: default }
spec:
  parentRefs: [{ name: gw, sectionName: http }]
  hostnames: [g.example.com]
  rules: [{ name: echo, backendRefs: [{ name: web, port: 80 }] }]
---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: default }
spec: { ports: [{ name: http, port: 80 }] }
---
apiVersion: v1
kind: Service
metadata: { name: api, namespace: default }
spec: { ports: [{ port: 80 }] }
`;

const policy = (name: string, created: string, targets: string, body: string) => `
---
apiVersion: gatehouse.dev/v1alpha1
kind: BackendTrafficPolicy
metadata: { name: ${name}, namespace: default, creationTimestamp: "${created}" }
spec:
  targetRefs: ${targets}
${body}`;

const gw = (section = "") =>
  `[{ group: gateway.networking.k8s.io, kind: Gateway, name: gw${section ? `, sectionName: ${section}` : ""} }]`;
const route = (name: string, section = "") =>
  `[{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: ${name}${section ? `, sectionName: ${section}` : ""} }]`;
const lb = (type: string) => `  loadBalancer: { type: ${type} }`;
const cb = (n: number) => `  circuitBreaker: { maxParallelRequests: ${n} }`;

function run(...policies: string[]) {
  const { load } = assemble([
    mergeFile({ file: "inline.yaml", parse: parseFileText(base + policies.join("")) }),
  ]);
  return translate(load.snapshot);
}

/** Each placed route's backend, by listener port and route name: its id and the model's backend. */
function backendsOf(model: GatewayModel): Map<string, Backend & { routeBackendId: string }> {
  const out = new Map<string, Backend & { routeBackendId: string }>();
  for (const l of model.listeners)
    for (const vh of l.virtualHosts)
      for (const r of vh.routes) {
        if (r.action.kind !== "Forward") continue;
        const id = r.action.backends[0]?.backendId ?? "";
        const b = model.backends[id];
        if (b !== undefined)
          out.set(`${l.port} ${r.source.name}${r.ruleName ? `#${r.ruleName}` : ""}`, {
            ...b,
            routeBackendId: id,
          });
      }
  return out;
}

const ancestors = (statuses: readonly ObjectStatus[], name: string) =>
  (
    (
      statuses.find((s) => s.target.name === name)?.status as {
        ancestors: { conditions: { reason: string }[] }[];
      }
    )?.ancestors ?? []
  ).map((a) => a.conditions[0]?.reason);
const reasons = (problems: readonly Problem[], name: string) =>
  problems.filter((p) => p.object?.name === name).map((p) => p.reason);

test("an HTTPRoute policy applies to that route's backends only, through a variant of the backend", () => {
  const out = run(policy("on-a", "2026-01-01T00:00:00Z", route("a"), lb("Random")));
  const by = backendsOf(out.model);
  expect(by.get("8080 a#main")?.loadBalancer?.algorithm).toBe("Random");
  expect(by.get("8080 a#main")?.routeBackendId).toBe("default/web:80/policy/default/on-a");
  expect(by.get("8080 a#api")?.loadBalancer?.algorithm).toBe("Random");
  expect(by.get("8080 b")?.loadBalancer).toBeUndefined();
  expect(by.get("8080 b")?.routeBackendId).toBe("default/web:80");
  // The plain backend is still there, unchanged, for the other routes.
  expect(out.model.backends["default/web:80"]?.loadBalancer).toBeUndefined();
  expect(ancestors(out.statuses, "on-a")).toEqual(["Accepted"]);
});

test("a rule by sectionName: only that rule's backends", () => {
  const out = run(policy("on-api", "2026-01-01T00:00:00Z", route("a", "api"), lb("Random")));
  const by = backendsOf(out.model);
  expect(by.get("8080 a#api")?.loadBalancer?.algorithm).toBe("Random");
  expect(by.get("8080 a#main")?.loadBalancer).toBeUndefined();
});

test("a Gateway policy applies to every route; a listener by sectionName to that listener's only", () => {
  const all = backendsOf(run(policy("on-gw", "2026-01-01T00:00:00Z", gw(), cb(5))).model);
  for (const key of ["8080 a#main", "8080 a#api", "8081 a#main", "8080 b"])
    expect(all.get(key)?.circuitBreaker?.maxParallelRequests).toBe(5);
  // Routes a and b reach web through the same policy: one variant, one breaker count, one health state.
  expect(all.get("8080 a#main")?.routeBackendId).toBe(all.get("8080 b")?.routeBackendId as string);
  const one = backendsOf(run(policy("on-http", "2026-01-01T00:00:00Z", gw("other"), cb(5))).model);
  expect(one.get("8081 a#main")?.circuitBreaker?.maxParallelRequests).toBe(5);
  expect(one.get("8080 a#main")?.circuitBreaker).toBeUndefined();
});

test("field group by field group, the most specific wins: Service > route rule > route > listener > Gateway", () => {
  const out = run(
    policy("gw-all", "2026-01-01T00:00:00Z", gw(), `${lb("Random")}\n${cb(5)}`),
    policy("gw-listener", "2026-01-02T00:00:00Z", gw("http"), cb(6)),
    policy("route-a", "2026-01-03T00:00:00Z", route("a"), lb("LeastRequest")),
    policy("rule-api", "2026-01-04T00:00:00Z", route("a", "api"), cb(7)),
    policy("svc-api", "2026-01-05T00:00:00Z", `[{ group: "", kind: Service, name: api }]`, lb("RoundRobin")),
  );
  const by = backendsOf(out.model);
  // Route b on listener http: the listener's breaker, the Gateway's balancing.
  expect(by.get("8080 b")?.circuitBreaker?.maxParallelRequests).toBe(6);
  expect(by.get("8080 b")?.loadBalancer?.algorithm).toBe("Random");
  // Route a on listener other: its own balancing, the Gateway's breaker.
  expect(by.get("8081 a#main")?.loadBalancer?.algorithm).toBe("LeastRequest");
  expect(by.get("8081 a#main")?.circuitBreaker?.maxParallelRequests).toBe(5);
  // Rule api: the rule's breaker; its Service's own policy decides balancing over every route level.
  expect(by.get("8080 a#api")?.circuitBreaker?.maxParallelRequests).toBe(7);
  expect(by.get("8080 a#api")?.loadBalancer?.algorithm).toBe("RoundRobin");
  expect(by.get("8080 a#api")?.routeBackendId).toBe("default/api:80/policy/default/rule-api");
  // Losers are told, never silently dropped.
  expect(reasons(out.problems, "route-a")).toContain("Overridden");
  expect(reasons(out.problems, "gw-all")).toContain("Overridden");
  for (const name of ["gw-all", "gw-listener", "route-a", "rule-api", "svc-api"])
    expect(ancestors(out.statuses, name)).toEqual(["Accepted"]);
});

test("status: Conflicted (the older wins), TargetNotFound, unsupported kinds, invalid policies claim nothing", () => {
  const out = run(
    policy("older", "2026-01-01T00:00:00Z", route("a"), lb("Random")),
    policy("newer", "2026-01-02T00:00:00Z", route("a"), lb("LeastRequest")),
    policy(
      "missing",
      "2026-01-01T00:00:00Z",
      `${route("nope").slice(0, -1)}, ${gw("nope").slice(1, -1)}, { group: gateway.networking.k8s.io, kind: TLSRoute, name: t }]`,
      lb("Random"),
    ),
    policy("broken", "2025-01-01T00:00:00Z", route("a"), "  loadBalancer: { type: Fancy }"),
  );
  expect(ancestors(out.statuses, "older")).toEqual(["Accepted"]);
  expect(ancestors(out.statuses, "newer")).toEqual(["Conflicted"]);
  expect(ancestors(out.statuses, "missing")).toEqual(["TargetNotFound", "TargetNotFound", "Invalid"]);
  expect(ancestors(out.statuses, "broken")).toEqual(["Invalid"]);
  expect(reasons(out.problems, "newer")).toContain("Conflicted");
  expect(backendsOf(out.model).get("8080 a#main")?.loadBalancer?.algorithm).toBe("Random");
});

test("what the Service's own policy decides is one state with the Service port's backend", () => {
  const passive = "  healthCheck: { passive: { consecutive5XxErrors: 3 } }";
  const out = run(
    policy(
      "svc-web",
      "2026-01-01T00:00:00Z",
      `[{ group: "", kind: Service, name: web }]`,
      `${passive}\n${cb(9)}`,
    ),
    policy("gw-lb", "2026-01-02T00:00:00Z", gw(), lb("Random")),
    policy("rule-api", "2026-01-03T00:00:00Z", route("a", "api"), `${passive}\n${cb(4)}`),
  );
  const by = backendsOf(out.model);
  const web = by.get("8080 b");
  expect(web?.routeBackendId).toBe("default/web:80/policy/default/gw-lb");
  expect(web?.loadBalancer?.algorithm).toBe("Random");
  expect(web?.healthCheck?.source.name).toBe("svc-web");
  expect(web?.stateOf).toEqual({ health: "default/web:80", breaker: "default/web:80" });
  // A route's own health check and breaker are its own state.
  const api = by.get("8080 a#api");
  expect(api?.healthCheck?.source.name).toBe("rule-api");
  expect(api?.stateOf).toBeUndefined();
});

test("GRPCRoutes are targets too (their h2c backends get the variant), and Gateway policies reach them", () => {
  const grpc = `[{ group: gateway.networking.k8s.io, kind: GRPCRoute, name: g, sectionName: echo }]`;
  const out = run(
    policy("on-g", "2026-01-01T00:00:00Z", grpc, cb(3)),
    policy("gw-lb", "2026-01-02T00:00:00Z", gw(), lb("Random")),
  );
  const g = backendsOf(out.model).get("8080 g#echo");
  expect(g?.routeBackendId).toBe("default/web:80/h2c/policy/default/on-g+default/gw-lb");
  expect(g?.protocol).toBe("h2c");
  expect(g?.circuitBreaker?.maxParallelRequests).toBe(3);
  expect(g?.loadBalancer?.algorithm).toBe("Random");
  expect(ancestors(out.statuses, "on-g")).toEqual(["Accepted"]);
});

test("a policy whose targets place no forwarding route says it applies nowhere yet", () => {
  const out = run(policy("on-orphan", "2026-01-01T00:00:00Z", route("orphan"), lb("Random")));
  expect(ancestors(out.statuses, "on-orphan")).toEqual(["Accepted"]);
  expect(reasons(out.problems, "on-orphan")).toEqual(["NoEffect"]);
  expect(
    reasons(run(policy("on-a", "2026-01-01T00:00:00Z", route("a"), lb("Random"))).problems, "on-a"),
  ).toEqual([]);
});

test("Envoy Gateway's mergeType is refused by name: Gatehouse always merges by field group", () => {
  const out = run(
    policy("merging", "2026-01-01T00:00:00Z", route("a"), `${lb("Random")}\n  mergeType: StrategicMerge`),
  );
  expect(ancestors(out.statuses, "merging")).toEqual(["Invalid"]);
  expect(out.problems.find((p) => p.object?.name === "merging")?.message).toContain("spec.mergeType");
  expect(backendsOf(out.model).get("8080 a#main")?.loadBalancer).toBeUndefined();
});

test("TLS, TCP and UDP traffic takes none of the settings: a Gateway or Service policy reaching it says so", () => {
  const tcp = `
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: tcp, namespace: default }
spec:
  gatewayClassName: gatehouse
  listeners: [{ name: raw, protocol: TCP, port: 9000 }]
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata: { name: t, namespace: default }
spec:
  parentRefs: [{ name: tcp }]
  rules: [{ backendRefs: [{ name: api, port: 80 }] }]
`;
  const messages = (out: ReturnType<typeof run>, name: string) =>
    out.problems.filter((p) => p.object?.name === name && p.reason === "NoEffect").map((p) => p.message);
  const onGateway = run(
    tcp,
    policy(
      "on-tcp",
      "2026-01-01T00:00:00Z",
      `[{ group: gateway.networking.k8s.io, kind: Gateway, name: tcp }]`,
      lb("Random"),
    ),
  );
  expect(
    messages(onGateway, "on-tcp").some((m) => m.startsWith("listener raw of Gateway default/tcp carries")),
  ).toBe(true);
  const onService = run(
    tcp,
    policy("on-api", "2026-01-01T00:00:00Z", `[{ group: "", kind: Service, name: api }]`, lb("Random")),
  );
  expect(messages(onService, "on-api").some((m) => m.includes("TCPRoute"))).toBe(true);
  // Neither is said where no such route is.
  expect(
    messages(
      run(
        policy("on-api", "2026-01-01T00:00:00Z", `[{ group: "", kind: Service, name: api }]`, lb("Random")),
      ),
      "on-api",
    ),
  ).toEqual([]);
  expect(messages(run(policy("on-gw", "2026-01-01T00:00:00Z", gw(), lb("Random"))), "on-gw")).toEqual([]);
});
