import { describe, expect, test } from "bun:test";
import type { RawObject } from "./informer.ts";
import { attachesToOurs, ourGateways, servicesOfOurRoutes, targetsOurServices } from "./skipped-relevance.ts";

const obj = (kind: string, name: string, spec: unknown, namespace = "app"): RawObject =>
  ({ kind, metadata: { name, namespace }, spec }) as RawObject;

const classes = [
  obj("GatewayClass", "gatehouse", { controllerName: "gatehouse.dev/gateway-controller" }, ""),
  obj("GatewayClass", "eg", { controllerName: "gateway.envoyproxy.io/gatewayclass-controller" }, ""),
];
const gateways = [
  obj("Gateway", "ours", { gatewayClassName: "gatehouse" }, "infra"),
  obj("Gateway", "theirs", { gatewayClassName: "eg" }, "infra"),
];
const ours = ourGateways(classes, gateways, "gatehouse.dev/gateway-controller");

describe("which skipped objects are ours to report", () => {
  test("our Gateways are those of a class with our controller", () => {
    expect([...ours]).toEqual(["infra/ours"]);
  });

  test("a route or ListenerSet naming one of our Gateways, by defaults or in full", () => {
    expect(
      attachesToOurs(obj("GRPCRoute", "a", { parentRefs: [{ name: "ours", namespace: "infra" }] }), ours),
    ).toBe(true);
    expect(attachesToOurs(obj("GRPCRoute", "b", { parentRefs: [{ name: "ours" }] }, "infra"), ours)).toBe(
      true,
    );
    expect(attachesToOurs(obj("ListenerSet", "c", { parentRef: { name: "ours" } }, "infra"), ours)).toBe(
      true,
    );
    expect(attachesToOurs(obj("GRPCRoute", "d", { parentRefs: [{ name: "theirs" }] }, "infra"), ours)).toBe(
      false,
    );
    expect(attachesToOurs(obj("GRPCRoute", "e", { parentRefs: [{ name: "ours" }] }, "app"), ours)).toBe(
      false,
    );
    expect(
      attachesToOurs(
        obj("TCPRoute", "f", { parentRefs: [{ name: "ours", namespace: "infra", kind: "Service" }] }),
        ours,
      ),
    ).toBe(false);
    expect(attachesToOurs(obj("GRPCRoute", "g", "not an object"), ours)).toBe(false);
  });

  test("an XBackendTrafficPolicy on a Service one of our routes sends to", () => {
    const routes = [
      obj("HTTPRoute", "web", {
        parentRefs: [{ name: "ours", namespace: "infra" }],
        rules: [{ backendRefs: [{ name: "web" }, { name: "api", namespace: "other" }] }],
      }),
      obj("HTTPRoute", "elsewhere", {
        parentRefs: [{ name: "theirs", namespace: "infra" }],
        rules: [{ backendRefs: [{ name: "billing" }] }],
      }),
    ];
    const services = servicesOfOurRoutes(routes, ours);
    expect([...services].sort()).toEqual(["app/web", "other/api"]);
    const policy = (target: string, namespace = "app") =>
      obj(
        "XBackendTrafficPolicy",
        "tls",
        { targetRefs: [{ group: "", kind: "Service", name: target }] },
        namespace,
      );
    expect(targetsOurServices(policy("web"), services)).toBe(true);
    expect(targetsOurServices(policy("api", "other"), services)).toBe(true);
    expect(targetsOurServices(policy("billing"), services)).toBe(false);
  });
});
