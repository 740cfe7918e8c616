import { expect, test } from "bun:test";
import type { Gateway } from "../../sources/schema/gateway.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { infrastructureOf, infrastructureProblems, withInfrastructure } from "./infrastructure.ts";

const gateway = (infrastructure: unknown, name = "edge"): Gateway =>
  ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name, namespace: "apps" },
    spec: { gatewayClassName: "gatehouse", infrastructure, listeners: [] },
  }) as unknown as Gateway;

const own = {
  "app.kubernetes.io/managed-by": "gatehouse",
  "gatehouse.dev/gateway-name": "edge",
  "gatehouse.dev/gateway-namespace": "apps",
  "gateway.networking.k8s.io/gateway-name": "edge",
};

test("the spec's labels and annotations join ours, keys sorted; nothing refused", () => {
  const { metadata, refused } = infrastructureOf(
    gateway({
      labels: { team: "a", "example.com/tier": "gold", empty: "" },
      annotations: { "linkerd.io/inject": "enabled", note: "any text, even with spaces: ok" },
    }),
  );
  expect(refused).toEqual([]);
  expect(metadata.labels).toEqual({ ...own, empty: "", "example.com/tier": "gold", team: "a" });
  expect(Object.keys(metadata.labels)).toEqual(Object.keys(metadata.labels).sort());
  expect(metadata.annotations).toEqual({
    "linkerd.io/inject": "enabled",
    note: "any text, even with spaces: ok",
  });
});

test("no spec.infrastructure: our labels, no annotations", () => {
  expect(infrastructureOf(gateway(undefined)).metadata).toEqual({ labels: own, annotations: {} });
});

test("a key of ours with another value is refused and ours stays; the same value is no clash", () => {
  const gw = gateway({
    labels: {
      "gatehouse.dev/gateway-name": "spoof",
      "app.kubernetes.io/managed-by": "gatehouse",
      "gateway.networking.k8s.io/gateway-name": "other",
    },
    annotations: { "gatehouse.dev/infrastructure-annotations": "x", kept: "yes" },
  });
  const { metadata, refused } = infrastructureOf(gw);
  expect(metadata.labels).toEqual(own);
  expect(metadata.annotations).toEqual({ kept: "yes" });
  expect(refused).toHaveLength(3);
  expect(refused[0]).toContain('spec.infrastructure.labels["gatehouse.dev/gateway-name"]');
  expect(refused[0]).toContain('Gatehouse sets this key itself (to "edge")');
  expect(refused[1]).toContain('labels["gateway.networking.k8s.io/gateway-name"]');
  expect(refused[2]).toContain('annotations["gatehouse.dev/infrastructure-annotations"]');
  const problems = infrastructureProblems(gw);
  expect(problems.map((p) => [p.object.kind, p.object.name, p.reason, p.severity])).toEqual([
    ["Gateway", "edge", "UnsupportedValue", "warning"],
    ["Gateway", "edge", "UnsupportedValue", "warning"],
    ["Gateway", "edge", "UnsupportedValue", "warning"],
  ]);
});

test("keys and values the CRD refuses are refused, the valid ones kept", () => {
  const { metadata, refused } = infrastructureOf(
    gateway({
      labels: {
        ok: "v",
        "bad key": "v",
        "Upper.example/x": "v",
        "a/b/c": "v",
        [`${"n".repeat(64)}`]: "v",
        long: "v".repeat(64),
        "-dash": "v",
        trailing: "v-",
        number: 7,
      },
      annotations: { big: "x".repeat(4097), fits: "x".repeat(4096), "example.com/": "v" },
    }),
  );
  expect(metadata.labels).toEqual({ ...own, ok: "v" });
  expect(metadata.annotations).toEqual({ fits: "x".repeat(4096) });
  expect(refused).toHaveLength(10);
  expect(refused.join("\n")).toContain('labels["number"]: the value is not a string');
  expect(refused.join("\n")).toContain("labels[\"Upper.example/x\"]: the prefix before '/' must be a DNS");
  expect(refused.join("\n")).toContain('annotations["big"]: an annotation value has at most 4096');
});

test("a map that is not a map is refused whole", () => {
  const { metadata, refused } = infrastructureOf(gateway({ labels: ["a"], annotations: "b" }));
  expect(metadata).toEqual({ labels: own, annotations: {} });
  expect(refused).toEqual([
    "spec.infrastructure.labels is not a map; nothing of it is propagated",
    "spec.infrastructure.annotations is not a map; nothing of it is propagated",
  ]);
});

test("withInfrastructure gives each Gateway status its record; others untouched, .status unchanged", () => {
  const status = (kind: string, name: string): ObjectStatus => ({
    target: { group: "gateway.networking.k8s.io", kind, namespace: "apps", name },
    status: { conditions: [] },
  });
  const statuses = [status("Gateway", "edge"), status("HTTPRoute", "web"), status("Gateway", "unknown")];
  const out = withInfrastructure(statuses, [gateway({ labels: { team: "a" } })]);
  expect(out[0]?.infrastructure).toEqual({ labels: { ...own, team: "a" }, annotations: {} });
  expect(out[0]?.status).toBe(statuses[0]?.status as ObjectStatus["status"]);
  expect(out[1]).toBe(statuses[1] as ObjectStatus);
  expect(out[2]).toBe(statuses[2] as ObjectStatus);
});
