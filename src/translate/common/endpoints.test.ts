import { describe, expect, test } from "bun:test";
import type { EndpointSlice } from "../../sources/schema/core.ts";
import { selectEndpoints, slicePortFor } from "./endpoints.ts";

type Ep = NonNullable<EndpointSlice["endpoints"]>[number];

function slice(
  endpoints: Ep[],
  ports: EndpointSlice["ports"],
  extra: Partial<EndpointSlice> = {},
): EndpointSlice {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: "s", namespace: "ns", labels: { "kubernetes.io/service-name": "svc" } },
    addressType: "IPv4",
    endpoints,
    ports,
    ...extra,
  };
}

const http = { name: "http", port: 80, targetPort: 8080 };

describe("slicePortFor", () => {
  test("matches the slice port named like the Service port", () => {
    const s = slice(
      [],
      [
        { name: "metrics", port: 9100 },
        { name: "http", port: 8081 },
      ],
    );
    expect(slicePortFor(s, http)).toBe(8081);
  });

  test("unnamed Service ports match unnamed slice ports, null or empty", () => {
    expect(slicePortFor(slice([], [{ name: null, port: 7000 }]), { port: 80 })).toBe(7000);
    expect(slicePortFor(slice([], [{ name: "", port: 7001 }]), { port: 80 })).toBe(7001);
    expect(slicePortFor(slice([], [{ port: 7002 }]), { port: 80 })).toBe(7002);
  });

  test("no matching slice port means the slice does not serve this Service port", () => {
    expect(slicePortFor(slice([], [{ name: "other", port: 9 }]), http)).toBeUndefined();
  });

  test("a slice port named like a string targetPort is the fallback", () => {
    expect(slicePortFor(slice([], [{ name: "web", port: 7070 }]), { port: 80, targetPort: "web" })).toBe(
      7070,
    );
  });

  test("a slice without ports uses the numeric targetPort, else the Service port, never a name", () => {
    expect(slicePortFor(slice([], null), http)).toBe(8080);
    expect(slicePortFor(slice([], []), { port: 80 })).toBe(80);
    expect(slicePortFor(slice([], null), { port: 80, targetPort: "web" })).toBeUndefined();
    expect(slicePortFor(slice([], [{ name: "http", port: null }]), http)).toBe(8080);
  });
});

describe("selectEndpoints", () => {
  const ports = [{ name: "http", port: 8080 }];

  test("ready endpoints only, absent ready counting as ready", () => {
    const s = slice(
      [
        { addresses: ["10.0.0.1"], conditions: { ready: true } },
        { addresses: ["10.0.0.2"] },
        { addresses: ["10.0.0.3"], conditions: {} },
        { addresses: ["10.0.0.4"], conditions: { ready: false, serving: true, terminating: true } },
        { addresses: ["10.0.0.5"], conditions: { ready: false } },
      ],
      ports,
    );
    expect(selectEndpoints([s], http).endpoints.map((e) => e.address)).toEqual([
      "10.0.0.1",
      "10.0.0.2",
      "10.0.0.3",
    ]);
  });

  test("with nothing ready, the serving and terminating endpoints, over all slices", () => {
    const a = slice(
      [{ addresses: ["10.0.0.9"], conditions: { ready: false, serving: true, terminating: true } }],
      ports,
    );
    const b = slice(
      [
        { addresses: ["10.0.0.8"], conditions: { ready: false, serving: true, terminating: true } },
        { addresses: ["10.0.0.7"], conditions: { ready: false, serving: false, terminating: true } },
        { addresses: ["10.0.0.6"], conditions: { ready: false, serving: true, terminating: false } },
      ],
      ports,
    );
    expect(selectEndpoints([a, b], http).endpoints.map((e) => e.address)).toEqual(["10.0.0.8", "10.0.0.9"]);
  });

  test("one ready endpoint anywhere shuts out every terminating one", () => {
    const a = slice(
      [{ addresses: ["10.0.0.9"], conditions: { ready: false, serving: true, terminating: true } }],
      ports,
    );
    const b = slice([{ addresses: ["10.0.0.1"] }], ports);
    expect(selectEndpoints([a, b], http).endpoints).toEqual([{ address: "10.0.0.1", port: 8080 }]);
  });

  test("de-duplicates by address and port, sorts, uses the first address and Pod names", () => {
    const a = slice(
      [
        { addresses: ["10.0.0.2", "10.9.9.9"], targetRef: { kind: "Pod", name: "p2" } },
        { addresses: ["10.0.0.1"], targetRef: { kind: "Node", name: "n1" } },
      ],
      ports,
    );
    const b = slice([{ addresses: ["10.0.0.2"], targetRef: { kind: "Pod", name: "p2" } }], ports);
    expect(selectEndpoints([a, b], http).endpoints).toEqual([
      { address: "10.0.0.1", port: 8080 },
      { address: "10.0.0.2", port: 8080, pod: "p2" },
    ]);
  });

  test("FQDN slices are skipped and returned", () => {
    const f = slice([{ addresses: ["db.example.com"] }], ports, { addressType: "FQDN" });
    const r = selectEndpoints([f], http);
    expect(r.endpoints).toEqual([]);
    expect(r.fqdnSlices).toEqual([f]);
  });

  test("tolerates slices without endpoints", () => {
    expect(
      selectEndpoints([slice([], ports), { ...slice([], ports), endpoints: null }], http).endpoints,
    ).toEqual([]);
  });
});
