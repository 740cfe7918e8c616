import { describe, expect, test } from "bun:test";
import {
  gatewayListenerName,
  gatewayListenerSection,
  h2cBackendId,
  httpRouteMatchName,
  httpRouteName,
  ingressTLSBackendId,
} from "./names.ts";

describe("names", () => {
  test("a Gateway listener's name gives its section back, for that Gateway only", () => {
    const name = gatewayListenerName("ns", "gw", "https-1");
    expect(name).toBe("gateway/ns/gw/https-1");
    expect(gatewayListenerSection(name, "ns", "gw")).toBe("https-1");
    expect(gatewayListenerSection(name, "ns", "g")).toBeUndefined();
    expect(gatewayListenerSection(name, "n", "s/gw")).toBeUndefined();
    expect(gatewayListenerSection("default/http", "ns", "gw")).toBeUndefined();
  });

  test("route names point at the rule and match they came from", () => {
    expect(httpRouteMatchName(httpRouteName("ns", "web"), 2, 0)).toBe("httproute/ns/web/rule/2/match/0");
  });

  test("an Ingress's TLS variant of a backend names the Ingress; its h2c one is GRPCRoute's", () => {
    expect(ingressTLSBackendId("shop/api:443", "shop", "web")).toBe("shop/api:443/tls/ingress/shop/web");
    expect(h2cBackendId("shop/api:443")).toBe("shop/api:443/h2c");
  });
});
