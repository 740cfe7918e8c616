import { describe, expect, test } from "bun:test";
import { parse } from "yaml";
import { dumpModel, dumpTranslateResult, redacted } from "./dump.ts";
import type { GatewayModel, Problem } from "./index.ts";

const source = { kind: "Ingress", namespace: "ns", name: "web" };

function model(): GatewayModel {
  return {
    listeners: [
      {
        source: { kind: "Gatehouse", namespace: "", name: "default" },
        name: "default/https",
        address: "",
        port: 8443,
        protocol: "HTTPS",
        tls: {
          certificates: [
            { source, hostnames: ["a.test"], certPem: "CERT", keyPem: "-----BEGIN PRIVATE KEY-----\nSECRET" },
          ],
        },
        virtualHosts: [
          {
            hostname: "a.test",
            match: "Exact",
            routes: [
              {
                name: "r/1",
                source,
                match: { path: { type: "Prefix", value: "/b" }, headers: [], queryParams: [] },
                filters: [],
                action: { kind: "Forward", backends: [{ backendId: "ns/z:80", weight: 1, filters: [] }] },
                timeouts: undefined,
              },
              {
                name: "r/0",
                source,
                match: { path: { type: "Prefix", value: "/" }, headers: [], queryParams: [] },
                filters: [],
                action: { kind: "Forward", backends: [{ backendId: "ns/a:80", weight: 1, filters: [] }] },
              },
            ],
          },
        ],
      },
    ],
    backends: {
      "ns/z:80": {
        id: "ns/z:80",
        service: { namespace: "ns", name: "z", port: 80 },
        protocol: "http",
        endpoints: [],
        problem: "NoReadyEndpoints",
      },
      "ns/a:80": {
        id: "ns/a:80",
        service: { namespace: "ns", name: "a", port: 80 },
        protocol: "http",
        endpoints: [{ address: "10.0.0.1", port: 8080 }],
      },
    },
  };
}

describe("dumpModel", () => {
  test("redacts private keys but keeps certificates", () => {
    const text = dumpModel(model());
    expect(text).not.toContain("SECRET");
    expect(text).toContain("CERT");
    const back = parse(text) as GatewayModel;
    expect(back.listeners[0]?.tls?.certificates[0]?.keyPem).toBe(redacted);
  });

  test("sorts map keys but keeps array order", () => {
    const text = dumpModel(model());
    expect(text.indexOf("ns/a:80:")).toBeLessThan(text.indexOf("ns/z:80:"));
    expect(text.indexOf("backends:")).toBeLessThan(text.indexOf("listeners:"));
    expect(text.indexOf("name: r/1")).toBeLessThan(text.indexOf("name: r/0"));
  });

  test("drops undefined fields and prints shared objects in full, without aliases", () => {
    const text = dumpModel(model());
    expect(text).not.toContain("timeouts");
    expect(text).not.toMatch(/[&*]a\d/);
    const back = parse(text) as GatewayModel;
    const routes = back.listeners[0]?.virtualHosts[0]?.routes ?? [];
    expect(routes.map((r) => r.source)).toEqual([source, source]);
  });

  test("is the same text whatever the key order of the input", () => {
    const m = model();
    const reordered: GatewayModel = { backends: m.backends, listeners: m.listeners };
    expect(dumpModel(reordered)).toBe(dumpModel(m));
  });
});

describe("dumpTranslateResult", () => {
  test("holds the model and the problems, and round-trips", () => {
    const problems: Problem[] = [
      {
        object: source,
        reason: "InvalidHost",
        message: 'spec.rules[0].host "A": must be lower-case',
        severity: "error",
      },
    ];
    const text = dumpTranslateResult({ model: model(), problems });
    expect(text.startsWith("model:")).toBe(true);
    const back = parse(text) as { problems: Problem[] };
    expect(back.problems).toEqual(problems);
  });
});
