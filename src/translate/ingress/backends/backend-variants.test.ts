import { describe, expect, test } from "bun:test";
import type { Backend, Route, VirtualHost } from "../../../model/index.ts";
import type { IngressBackendSettings } from "./backend-protocol.ts";
import { applyBackendProtocols } from "./backend-variants.ts";

const backend = (id: string, more: Partial<Backend> = {}): Backend => ({
  id,
  service: { namespace: "shop", name: id.split("/")[1]?.split(":")[0] ?? "", port: 443 },
  protocol: "http",
  endpoints: [{ address: "10.0.0.1", port: 8443 }],
  ...more,
});

const route = (ingress: string, backendIds: readonly string[]): Route => ({
  name: `ingress/shop/${ingress}/rule/0/path/0`,
  source: { kind: "Ingress", namespace: "shop", name: ingress },
  match: { path: { type: "Prefix", value: "/" }, headers: [], queryParams: [] },
  filters: [],
  action: {
    kind: "Forward",
    backends: backendIds.map((backendId) => ({ backendId, weight: 1, filters: [] })),
  },
});

const hosts = (...routes: Route[]): VirtualHost[] => [{ hostname: "a.test", match: "Exact", routes }];
const ids = (vhs: readonly VirtualHost[]) =>
  vhs[0]?.routes.map((r) =>
    r.action.kind === "Forward" ? r.action.backends.map((b) => b.backendId) : r.action.kind,
  );
const tls = (more: Partial<NonNullable<IngressBackendSettings["tls"]>> = {}) => ({
  verifyAsked: false,
  sniAsked: false,
  ...more,
});

const backends = {
  "shop/api:443": backend("shop/api:443"),
  "shop/grpc:443": backend("shop/grpc:443", { protocol: "h2c" }),
  "shop/gone:443": backend("shop/gone:443", { problem: "ServiceNotFound", endpoints: [] }),
};

describe("backend-protocol variants", () => {
  test("an Ingress's TLS is its own: another Ingress on the same port keeps the plain backend", () => {
    const settings = new Map([["shop/secure", { protocol: "HTTPS" as const, tls: tls({ caPem: "CA" }) }]]);
    const out = applyBackendProtocols(
      hosts(route("secure", ["shop/api:443"]), route("plain", ["shop/api:443"])),
      settings,
      backends,
    );
    expect(ids(out.http)).toEqual([["shop/api:443/tls/ingress/shop/secure"], ["shop/api:443"]]);
    expect(out.backends["shop/api:443/tls/ingress/shop/secure"]).toEqual({
      ...backends["shop/api:443"],
      id: "shop/api:443/tls/ingress/shop/secure",
      tls: {
        serverName: "api.shop.svc",
        caPem: "CA",
        source: { kind: "Ingress", namespace: "shop", name: "secure" },
      },
    });
    expect(out.backends["shop/api:443"]).toBe(backends["shop/api:443"]);
    expect(out.problems.map((p) => [p.reason, p.severity])).toEqual([["BackendTLSVerified", "warning"]]);
  });

  test("GRPC: the h2c variant, unless the port is h2c by appProtocol already", () => {
    const settings = new Map([["shop/g", { protocol: "GRPC" as const }]]);
    const out = applyBackendProtocols(
      hosts(route("g", ["shop/api:443", "shop/grpc:443"])),
      settings,
      backends,
    );
    expect(ids(out.http)).toEqual([["shop/api:443/h2c", "shop/grpc:443"]]);
    expect(out.backends["shop/api:443/h2c"]?.protocol).toBe("h2c");
    expect(out.problems).toEqual([]);
  });

  test("GRPCS: h2c inside TLS; AUTO_HTTP: cleartext on the HTTP listener, TLS on the HTTPS one", () => {
    const grpcs = applyBackendProtocols(
      hosts(route("g", ["shop/api:443"])),
      new Map([["shop/g", { protocol: "GRPCS" as const, tls: tls() }]]),
      backends,
    );
    expect(grpcs.backends["shop/api:443/tls/ingress/shop/g"]?.protocol).toBe("h2c");
    const auto = applyBackendProtocols(
      hosts(route("a", ["shop/api:443"])),
      new Map([["shop/a", { protocol: "AUTO_HTTP" as const, tls: tls({ serverName: "api.internal" }) }]]),
      backends,
    );
    expect([ids(auto.http), ids(auto.https)]).toEqual([
      [["shop/api:443"]],
      [["shop/api:443/tls/ingress/shop/a"]],
    ]);
    expect(auto.backends["shop/api:443/tls/ingress/shop/a"]?.tls?.serverName).toBe("api.internal");
  });

  test("invalid TLS: InvalidBackendTLS (503), never the plain backend; a missing Service stays what it is", () => {
    const settings = new Map([
      ["shop/s", { protocol: "HTTPS" as const, tls: tls({ invalid: "no ca.crt" }) }],
    ]);
    const out = applyBackendProtocols(
      hosts(route("s", ["shop/api:443", "shop/gone:443"])),
      settings,
      backends,
    );
    expect(out.backends["shop/api:443/tls/ingress/shop/s"]?.problem).toBe("InvalidBackendTLS");
    expect(out.backends["shop/gone:443/tls/ingress/shop/s"]?.problem).toBe("ServiceNotFound");
    // The invalid Secret is reported where it is read (proxy-ssl.ts), not again here.
    expect(out.problems).toEqual([]);
  });

  test("FCGI: every path answers 503, on both listeners", () => {
    const out = applyBackendProtocols(
      hosts(route("f", ["shop/api:443"])),
      new Map([["shop/f", { protocol: "FCGI" as const }]]),
      backends,
    );
    expect([ids(out.http), ids(out.https)]).toEqual([["DirectResponse"], ["DirectResponse"]]);
    const action = out.http[0]?.routes[0]?.action;
    expect(action?.kind === "DirectResponse" ? action.status : 0).toBe(503);
  });

  test("no settings: everything as given", () => {
    const vhs = hosts(route("p", ["shop/api:443"]));
    const out = applyBackendProtocols(vhs, new Map(), backends);
    expect([out.http, out.https, out.backends, out.problems]).toEqual([vhs, vhs, backends, []]);
  });
});
