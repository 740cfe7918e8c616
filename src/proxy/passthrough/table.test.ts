import { expect, test } from "bun:test";
import type { GatewayModel, PassthroughListener, SNIRoute } from "../../model/index.ts";
import { compilePassthrough, routeFor } from "./table.ts";

const source = { kind: "TLSRoute", namespace: "t", name: "r" };
const route = (
  name: string,
  hosts: string[],
  backends: SNIRoute["backends"] = [{ backendId: "t/a:1", weight: 1 }],
) => ({
  name,
  source,
  hostnames: hosts.map((h) => ({
    hostname: h,
    match:
      h === "*" ? ("Any" as const) : h.startsWith("*.") ? ("WildcardAnyLabels" as const) : ("Exact" as const),
  })),
  backends,
});
const listener = (name: string, routes: SNIRoute[], hostname?: string): PassthroughListener => ({
  name,
  address: "",
  port: 443,
  ...(hostname ? { hostname } : {}),
  source,
  routes,
});
const backends: GatewayModel["backends"] = {
  "t/a:1": {
    id: "t/a:1",
    service: { namespace: "t", name: "a", port: 1 },
    protocol: "http",
    endpoints: [
      { address: "10.0.0.1", port: 443 },
      { address: "10.0.0.2", port: 443 },
    ],
  },
  "t/empty:1": {
    id: "t/empty:1",
    service: { namespace: "t", name: "empty", port: 1 },
    protocol: "http",
    endpoints: [],
  },
};
const table = (...ls: PassthroughListener[]) => {
  const t = compilePassthrough({ listeners: [], backends, passthroughListeners: ls }, "0.0.0.0").get(
    "0.0.0.0:443",
  );
  if (!t) throw new Error("no table");
  return t;
};

test("exact before the longest wildcard before a route without hostnames; the first route keeps a name", () => {
  const t = table(
    listener("l", [
      route("any", ["*"]),
      route("wide", ["*.example.com"]),
      route("narrow", ["*.a.example.com"]),
      route("exact", ["x.a.example.com"]),
      route("later-exact", ["x.a.example.com"]),
    ]),
  );
  expect(routeFor(t, "x.a.example.com")?.name).toBe("exact");
  expect(routeFor(t, "y.a.example.com")?.name).toBe("narrow");
  expect(routeFor(t, "b.example.com")?.name).toBe("wide");
  expect(routeFor(t, "example.com")?.name).toBe("any");
  expect(routeFor(t, undefined)?.name).toBe("any");
});

test("listener isolation: the most specific listener takes the name even when it has no route for it", () => {
  const t = table(
    listener("catch-all", [route("wild", ["*.example.com"])]),
    listener("specific", [], "foo.example.com"),
    listener("wild", [route("w", ["*.bar.example.com"])], "*.bar.example.com"),
  );
  expect(routeFor(t, "foo.example.com")).toBeUndefined();
  expect(routeFor(t, "x.bar.example.com")?.name).toBe("w");
  expect(routeFor(t, "other.example.com")?.name).toBe("wild");
  expect(routeFor(t, "nothing.org")).toBeUndefined();
});

test("endpoints round-robin; refused and empty backends and weight 0 close the connection", () => {
  const t = table(
    listener("l", [
      route("ok", ["ok.example"]),
      route("refused", ["refused.example"], [{ backendId: "x/y:1", weight: 1, refused: true }]),
      route("empty", ["empty.example"], [{ backendId: "t/empty:1", weight: 1 }]),
      route("zero", ["zero.example"], [{ backendId: "t/a:1", weight: 0 }]),
    ]),
  );
  const ok = routeFor(t, "ok.example");
  expect(
    [ok?.pick(), ok?.pick(), ok?.pick()].map((d) => (d?.kind === "endpoint" ? d.address : d?.kind)),
  ).toEqual(["10.0.0.1", "10.0.0.2", "10.0.0.1"]);
  for (const name of ["refused.example", "empty.example", "zero.example"])
    expect(routeFor(t, name)?.pick().kind).toBe("refused");
});
