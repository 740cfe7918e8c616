import { describe, expect, test } from "bun:test";
import { grpcMatchAsHTTP } from "./method-match.ts";

const pathOf = (method: Record<string, string> | undefined) => {
  const r = grpcMatchAsHTTP(method === undefined ? {} : { method });
  return typeof r === "string" ? r : r.match.path;
};

describe("GRPCRoute method matches as path matches", () => {
  test("Exact: service and method, service alone, method alone, neither", () => {
    expect(pathOf({ service: "echo.v1.Echo", method: "Say" })).toEqual({
      type: "Exact",
      value: "/echo.v1.Echo/Say",
    });
    expect(pathOf({ service: "echo.v1.Echo" })).toEqual({ type: "PathPrefix", value: "/echo.v1.Echo" });
    expect(pathOf({ method: "Say" })).toEqual({ type: "RegularExpression", value: "/[^/]+/Say" });
    expect(pathOf(undefined)).toEqual({ type: "PathPrefix", value: "/" });
    expect(pathOf({ type: "Exact" })).toBe("method: one or both of service and method must be set");
  });

  test("Exact values outside the CRD's patterns are refused (nothing reaches a regex unescaped)", () => {
    expect(pathOf({ service: "echo/v1" })).toStartWith('method.service "echo/v1" must match');
    expect(pathOf({ method: "Say.*" })).toStartWith('method.method "Say.*" must match');
    expect(pathOf({ type: "Prefix", method: "Say" })).toBe(
      'method.type "Prefix" is not Exact or RegularExpression',
    );
  });

  test("RegularExpression: each side grouped, an absent side any one segment", () => {
    expect(pathOf({ type: "RegularExpression", service: "a|b", method: "X" })).toEqual({
      type: "RegularExpression",
      value: "/(?:a|b)/(?:X)",
    });
    expect(pathOf({ type: "RegularExpression", method: "Get.*" })).toEqual({
      type: "RegularExpression",
      value: "/[^/]+/(?:Get.*)",
    });
    expect(pathOf({ type: "RegularExpression", service: "(a)\\1" })).toStartWith('method.service "(a)\\1" ');
  });

  test("headers are kept; the order counts the service's and the method's characters", () => {
    const r = grpcMatchAsHTTP({
      method: { service: "svc", method: "Call" },
      headers: [{ name: "v", value: "1" }],
    });
    expect(r).toEqual({
      match: { path: { type: "Exact", value: "/svc/Call" }, headers: [{ name: "v", value: "1" }] },
      order: { service: 3, method: 4 },
    });
  });
});
