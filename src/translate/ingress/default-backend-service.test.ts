import { expect, test } from "bun:test";
import type { Listener } from "../../model/index.ts";
import type { EndpointSlice, Service } from "../../sources/schema/core.ts";
import type { Ingress } from "../../sources/schema/networking.ts";
import { emptySnapshot, type ResourceSnapshot } from "../../sources/snapshot.ts";
import { translate } from "../translate.ts";

function ingress(name: string, host: string, path: string, defaultBackend = false): Ingress {
  const backend = { service: { name: "web", port: { number: 80 } } };
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: "ns" },
    spec: {
      ingressClassName: "gatehouse",
      ...(defaultBackend ? { defaultBackend: backend } : {}),
      rules: [{ host, http: { paths: [{ path, pathType: "Prefix", backend }] } }],
    },
  };
}
const service = (name: string, port: number): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: "ns" },
  spec: { ports: [{ port }, { port: port + 1 }] },
});
const slice = (service: string): EndpointSlice => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name: `${service}-1`, namespace: "ns", labels: { "kubernetes.io/service-name": service } },
  addressType: "IPv4",
  endpoints: [{ addresses: ["10.0.0.1"] }],
  ports: [{ port: 8080 }],
});
const base: ResourceSnapshot = {
  ...emptySnapshot,
  ingresses: [
    ingress("narrow", "a.example", "/x"),
    ingress("root", "b.example", "/"),
    ingress("own", "c.example", "/y", true),
  ],
  services: [service("web", 80), service("fallback", 8080)],
  endpointSlices: [slice("web"), slice("fallback")],
};

/** Per host of the HTTP listener: the last route's name and backend. */
function lastRoutes(listener: Listener | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const vh of listener?.virtualHosts ?? []) {
    const r = vh.routes.at(-1);
    const backend = r?.action.kind === "Forward" ? r.action.backends[0]?.backendId : r?.action.kind;
    out[vh.hostname] = `${r?.name} -> ${backend}`;
  }
  return out;
}

test("placed last on * and on each Ingress host without Prefix / or a default backend of its own; first port", () => {
  const result = translate(base, { defaultBackendService: "ns/fallback" });
  expect(lastRoutes(result.model.listeners[0])).toEqual({
    "*": "ingress/ns/own/default-backend -> ns/web:80",
    "a.example": "default-backend-service -> ns/fallback:8080",
    "b.example": "ingress/ns/root/rule/0/path/0 -> ns/web:80",
    "c.example": "ingress/ns/own/default-backend -> ns/web:80",
  });
  expect(result.problems.filter((p) => p.object.kind === "Service")).toEqual([]);
  // Without an Ingress default backend, the catch-all host is the Service's too.
  const alone = translate(
    { ...base, ingresses: [ingress("narrow", "a.example", "/x")] },
    { defaultBackendService: "ns/fallback" },
  );
  expect(lastRoutes(alone.model.listeners[0])["*"]).toBe("default-backend-service -> ns/fallback:8080");
});

test("with no Ingress at all, every request goes to the Service", () => {
  const result = translate({ ...base, ingresses: [] }, { defaultBackendService: "ns/fallback" });
  expect(lastRoutes(result.model.listeners[0])).toEqual({
    "*": "default-backend-service -> ns/fallback:8080",
  });
});

test("a Service that is not there places nothing (the 404 stays); one without endpoints is placed; both warned", () => {
  const missing = translate(base, { defaultBackendService: "ns/nothing" });
  expect(JSON.stringify(missing.model)).not.toContain("default-backend-service");
  const said = missing.problems.find((p) => p.object.kind === "Service" && p.object.name === "nothing");
  expect([said?.reason, said?.severity]).toEqual(["BackendNotFound", "warning"]);
  const empty = translate(
    { ...base, endpointSlices: [slice("web")] },
    { defaultBackendService: "ns/fallback" },
  );
  expect(lastRoutes(empty.model.listeners[0])["a.example"]).toBe(
    "default-backend-service -> ns/fallback:8080",
  );
  const none = empty.problems.find((p) => p.object.kind === "Service" && p.object.name === "fallback");
  expect([none?.reason, none?.severity]).toEqual(["NoEndpoints", "warning"]);
});
