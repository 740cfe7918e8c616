import { describe, expect, test } from "bun:test";
import { gatewayListenerName, gatewayListenerSection, httpRouteMatchName, httpRouteName } from "./names.ts";

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
});
