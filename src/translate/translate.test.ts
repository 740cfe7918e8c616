import { describe, expect, test } from "bun:test";
import { dumpTranslateResult } from "../model/dump.ts";
import type { EndpointSlice, Service } from "../sources/schema/core.ts";
import type { Ingress } from "../sources/schema/networking.ts";
import { emptySnapshot, type ResourceSnapshot } from "../sources/snapshot.ts";
import { defaultTranslateOptions, translate } from "./translate.ts";

function ingress(name: string, host: string, path: string, created?: string): Ingress {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: "ns", ...(created ? { creationTimestamp: created } : {}) },
    spec: {
      ingressClassName: "gatehouse",
      rules: [
        {
          host,
          http: {
            paths: [
              { path, pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } },
            ],
          },
        },
      ],
    },
  };
}

const web: Service = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", namespace: "ns" },
  spec: { ports: [{ port: 80 }] },
};
const slice: EndpointSlice = {
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name: "web-1", namespace: "ns", labels: { "kubernetes.io/service-name": "web" } },
  addressType: "IPv4",
  endpoints: [{ addresses: ["10.0.0.1"] }],
  ports: [{ port: 80 }],
};

const snapshot: ResourceSnapshot = {
  ...emptySnapshot,
  ingresses: [
    ingress("c", "a.example", "/x", "2024-01-01T00:00:00Z"),
    ingress("a", "a.example", "/x", "2024-02-01T00:00:00Z"),
    ingress("b", "b.example", "/"),
    ingress("d", "a.example", "/y"),
  ],
  services: [web],
  endpointSlices: [slice],
};

describe("translate", () => {
  test("always emits the default HTTP listener on the configured port", () => {
    const empty = translate(emptySnapshot);
    expect(empty.model.listeners).toHaveLength(1);
    expect(empty.model.listeners[0]).toMatchObject({
      name: "default/http",
      port: 8080,
      protocol: "HTTP",
      virtualHosts: [],
    });
    expect(translate(emptySnapshot, { httpPort: 80 }).model.listeners[0]?.port).toBe(80);
    expect(translate(emptySnapshot, { httpPort: undefined }).model.listeners[0]?.port).toBe(
      defaultTranslateOptions.httpPort,
    );
  });

  test("output does not depend on input order", () => {
    const expected = dumpTranslateResult(translate(snapshot));
    const reversed = { ...snapshot, ingresses: [...snapshot.ingresses].reverse() };
    expect(dumpTranslateResult(translate(reversed))).toBe(expected);
    const rotated = {
      ...snapshot,
      ingresses: [...snapshot.ingresses.slice(2), ...snapshot.ingresses.slice(0, 2)],
    };
    expect(dumpTranslateResult(translate(rotated))).toBe(expected);
  });

  test("the oldest Ingress wins a conflict and the loser is warned", () => {
    const r = translate(snapshot);
    const hostA = r.model.listeners[0]?.virtualHosts.find((v) => v.hostname === "a.example");
    expect(hostA?.routes.map((x) => x.name)).toEqual([
      "ingress/ns/c/rule/0/path/0",
      "ingress/ns/d/rule/0/path/0",
    ]);
    expect(r.problems).toEqual([
      expect.objectContaining({
        object: { kind: "Ingress", namespace: "ns", name: "a" },
        reason: "Conflict",
      }),
    ]);
  });

  test("never throws: garbage in, problems and a listener out, good objects still served", () => {
    const garbage = {
      ingressClasses: [null, { metadata: {} }],
      ingresses: [
        null,
        {
          metadata: { name: "x" },
          spec: { rules: [null, { host: 5, http: { paths: [null, { pathType: "Prefix" }] } }] },
        },
        { metadata: { name: "y" }, spec: { ingressClassName: "gatehouse", rules: "nope" } },
        {
          metadata: { name: "z", namespace: "ns" },
          spec: {
            ingressClassName: "gatehouse",
            rules: [{ host: "ok.example", http: { paths: [null, 7] } }],
          },
        },
        ...snapshot.ingresses,
      ],
      services: [null, { metadata: { name: "s" } }, web],
      endpointSlices: [null, { metadata: { labels: { "kubernetes.io/service-name": "web" } } }, slice],
      secrets: null,
    } as unknown as ResourceSnapshot;
    const r = translate(garbage, { watchIngressWithoutClass: true });
    expect(r.model.listeners).toHaveLength(1);
    const hosts = r.model.listeners[0]?.virtualHosts.map((v) => v.hostname);
    expect(hosts).toEqual(["a.example", "b.example"]);
    expect(r.problems.length).toBeGreaterThan(0);
    expect(translate(undefined as unknown as ResourceSnapshot).model.listeners).toHaveLength(1);
  });
});
