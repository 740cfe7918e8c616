import { describe, expect, test } from "bun:test";
import type { RedirectAction, Route, TLSCertificate, VirtualHost } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import type { IngressTLS } from "../tls.ts";
import { applyHostEdits, coverExtraNames } from "./host-edits.ts";

const P = "nginx.ingress.kubernetes.io/";

function ingress(
  name: string,
  hosts: readonly string[],
  annotations: Record<string, string>,
  created = "2024-01-01T00:00:00Z",
): Ingress {
  const withPrefix = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [P + k, v]));
  return {
    metadata: { name, namespace: "shop", creationTimestamp: created, annotations: withPrefix },
    spec: { rules: hosts.map((host) => ({ host })) },
  } as unknown as Ingress;
}

function route(ingressName: string, path: string): Route {
  return {
    name: `ingress/shop/${ingressName}${path}`,
    source: { kind: "Ingress", namespace: "shop", name: ingressName },
    match: { path: { type: "Prefix", value: path }, headers: [], queryParams: [] },
    filters: [],
    action: { kind: "Forward", backends: [{ backendId: "shop/web:80", weight: 1, filters: [] }] },
  };
}

function vh(hostname: string, ...routes: Route[]): VirtualHost {
  const match = hostname === "*" ? "Any" : hostname.startsWith("*.") ? "WildcardOneLabel" : "Exact";
  return { hostname, match, routes };
}

const names = (hosts: readonly VirtualHost[]) => hosts.map((h) => h.hostname);
const find = (hosts: readonly VirtualHost[], name: string) => hosts.find((h) => h.hostname === name);

describe("app-root", () => {
  test("a route for exactly / goes first in each of the Ingress's hosts, the query not kept", () => {
    const hosts = [
      vh("a.example", route("other", "/x"), route("web", "/")),
      vh("b.example", route("web", "/")),
    ];
    const out = applyHostEdits(hosts, [ingress("web", ["a.example", "b.example"], { "app-root": "/app" })]);
    expect(out.problems).toEqual([]);
    for (const h of out.virtualHosts) {
      expect(h.routes[0]).toMatchObject({
        name: "ingress/shop/web/app-root",
        match: { path: { type: "Exact", value: "/" } },
        action: { kind: "Redirect", location: "$scheme://$http_host/app", statusCode: 302 },
      });
    }
    expect(find(out.virtualHosts, "a.example")?.routes).toHaveLength(3);
  });

  test("the oldest Ingress of a host wins; a later one is told", () => {
    const hosts = [vh("a.example", route("old", "/"), route("new", "/new"))];
    const out = applyHostEdits(hosts, [
      ingress("new", ["a.example"], { "app-root": "/new" }, "2025-01-01T00:00:00Z"),
      ingress("old", ["a.example"], { "app-root": "/old" }),
    ]);
    expect(out.virtualHosts[0]?.routes[0]?.action).toMatchObject({ location: "$scheme://$http_host/old" });
    expect(out.virtualHosts[0]?.routes.filter((r) => r.name.endsWith("app-root"))).toHaveLength(1);
    expect(out.problems.map((p) => [p.object.name, p.reason])).toEqual([["new", "AnnotationConflict"]]);
  });

  test("a value with a scheme, no leading / or bad characters is refused", () => {
    for (const value of ["https://x.example/app", "app", "/a b", "/$remote_addr"]) {
      const out = applyHostEdits(
        [vh("a.example", route("web", "/"))],
        [ingress("web", ["a.example"], { "app-root": value })],
      );
      expect(out.virtualHosts[0]?.routes).toHaveLength(1);
      expect(out.problems.map((p) => p.reason)).toEqual(["InvalidAnnotation"]);
      expect(out.problems[0]?.message).toContain(`app-root ${JSON.stringify(value)}`);
    }
  });
});

describe("server-alias", () => {
  test("each alias serves the host's routes; lower-cased, the host itself skipped", () => {
    const hosts = [vh("a.example", route("web", "/"))];
    const out = applyHostEdits(hosts, [
      ingress("web", ["a.example"], { "server-alias": " B.example ,*.c.example,, a.example, b.example" }),
    ]);
    expect(out.problems).toEqual([]);
    expect(names(out.virtualHosts)).toEqual(["*.c.example", "a.example", "b.example"]);
    expect(find(out.virtualHosts, "*.c.example")?.match).toBe("WildcardOneLabel");
    expect(find(out.virtualHosts, "b.example")?.routes).toBe(find(out.virtualHosts, "a.example")?.routes);
    expect(out.extraNames.map((e) => [e.name, e.host])).toEqual([
      ["*.c.example", "a.example"],
      ["b.example", "a.example"],
    ]);
  });

  test("an alias an Ingress rule serves, or another host's alias already, is not applied", () => {
    const hosts = [
      vh("a.example", route("web", "/")),
      vh("b.example", route("blog", "/")),
      vh("c.example", route("web", "/")),
    ];
    const out = applyHostEdits(hosts, [
      ingress("web", ["a.example", "c.example"], { "server-alias": "b.example, x.example" }),
      ingress("blog", ["b.example"], {}),
    ]);
    expect(names(out.virtualHosts)).toEqual(["a.example", "b.example", "c.example", "x.example"]);
    expect(find(out.virtualHosts, "x.example")?.routes).toBe(find(out.virtualHosts, "a.example")?.routes);
    expect(out.problems.map((p) => p.message)).toEqual([
      "annotation nginx.ingress.kubernetes.io/server-alias: alias b.example of host a.example is a host an Ingress rule serves; not applied",
      "annotation nginx.ingress.kubernetes.io/server-alias: alias b.example of host c.example is a host an Ingress rule serves; not applied",
      "annotation nginx.ingress.kubernetes.io/server-alias: alias x.example of host c.example is already an alias of another host; not applied",
    ]);
  });

  test("the oldest Ingress of a host sets its aliases", () => {
    const hosts = [vh("a.example", route("old", "/"), route("new", "/new"))];
    const out = applyHostEdits(hosts, [
      ingress("new", ["a.example"], { "server-alias": "new.example" }, "2025-01-01T00:00:00Z"),
      ingress("old", ["a.example"], { "server-alias": "old.example" }),
    ]);
    expect(names(out.virtualHosts)).toEqual(["a.example", "old.example"]);
    expect(out.problems.map((p) => p.object.name)).toEqual(["new"]);
  });

  test("nginx regular expressions, trailing wildcards and bad names are refused one by one", () => {
    const out = applyHostEdits(
      [vh("a.example", route("web", "/"))],
      [
        ingress("web", ["a.example"], {
          "server-alias": "~^www\\d+$, www.a.*, a_b.example, 10.0.0.1, ok.example",
        }),
      ],
    );
    expect(names(out.virtualHosts)).toEqual(["a.example", "ok.example"]);
    expect(out.problems.map((p) => p.reason)).toEqual(Array(4).fill("InvalidAnnotation"));
  });
});

describe("from-to-www-redirect", () => {
  const wwwAction = (host: string): RedirectAction => ({
    kind: "Redirect",
    hostname: host,
    stripTrailingSlash: true,
    writeDefaultPort: true,
    statusCode: 308,
  });

  test("www.<host> redirects to <host>, and <host> to www.<host>", () => {
    const hosts = [vh("a.example", route("web", "/")), vh("www.b.example", route("web", "/"))];
    const out = applyHostEdits(hosts, [
      ingress("web", ["a.example", "www.b.example"], { "from-to-www-redirect": "true" }),
    ]);
    expect(out.problems).toEqual([]);
    expect(names(out.virtualHosts)).toEqual(["a.example", "b.example", "www.a.example", "www.b.example"]);
    expect(find(out.virtualHosts, "www.a.example")?.routes).toMatchObject([
      {
        name: "ingress/shop/web/from-to-www",
        match: { path: { type: "Prefix", value: "/" } },
        action: wwwAction("a.example"),
      },
    ]);
    expect(find(out.virtualHosts, "b.example")?.routes[0]?.action).toEqual(wwwAction("www.b.example"));
  });

  test("no redirect where an Ingress serves the other name, nor for wildcard and host-less rules", () => {
    const hosts = [
      vh("*", route("web", "/")),
      vh("*.w.example", route("web", "/")),
      vh("a.example", route("web", "/")),
      vh("www.a.example", route("other", "/")),
    ];
    const out = applyHostEdits(hosts, [
      ingress("web", ["", "*.w.example", "a.example"], { "from-to-www-redirect": "true" }),
      ingress("other", ["www.a.example"], {}),
    ]);
    expect(out.virtualHosts).toEqual(hosts);
    expect(out.problems.map((p) => p.reason)).toEqual(Array(3).fill("AnnotationConflict"));
  });

  test("false asks for nothing; anything but a boolean is refused", () => {
    const hosts = [vh("a.example", route("web", "/"))];
    expect(
      applyHostEdits(hosts, [ingress("web", ["a.example"], { "from-to-www-redirect": "False" })]),
    ).toEqual({
      virtualHosts: hosts,
      extraNames: [],
      problems: [],
    });
    const bad = applyHostEdits(hosts, [ingress("web", ["a.example"], { "from-to-www-redirect": "yes" })]);
    expect(bad.virtualHosts).toEqual(hosts);
    expect(bad.problems.map((p) => p.reason)).toEqual(["InvalidAnnotation"]);
  });
});

test("a canary Ingress sets no host settings", () => {
  const hosts = [vh("a.example", route("web", "/"))];
  const out = applyHostEdits(hosts, [
    ingress("web", ["a.example"], { canary: "true", "app-root": "/app", "server-alias": "b.example" }),
  ]);
  expect(out.virtualHosts).toEqual(hosts);
  expect(out.problems.map((p) => p.reason)).toEqual(["CanaryAnnotationIgnored"]);
});

describe("coverExtraNames", () => {
  // Self-signed, names shop.example, www.shop.example and shop.example.net.
  const certPem = `
-----BEGIN CERTIFICATE-----
MIIBxDCCAWqgAwIBAgIUF5hjW054I5V6w+4k4edWJkDtTxYwCgYIKoZIzj0EAwIw
FzEVMBMGA1UEAwwMc2hvcC5leGFtcGxlMCAXDTI2MTEyNTAxMDUzNVoYDzIxMjYx
MTAxMDEwNTM1WjAXMRUwEwYDVQQDDAxzaG9wLmV4YW1wbGUwWTATBgcqhkjOPQIB
BggqhkjOPQMBBwNCAARKzM0rzOrAvPIEroI2Z2nhXvYV33QFrANr7Ootp/XB6yyV
JClzHEsaY2xFCV49iht59Ly4EHRSSPfrpdu1jb+zo4GRMIGOMB0GA1UdDgQWBBQf
aZfIspFF/ZyVmQTlHS8zbTHj4jAfBgNVHSMEGDAWgBQfaZfIspFF/ZyVmQTlHS8z
bTHj4jAPBgNVHRMBAf8EBTADAQH/MDsGA1UdEQQ0MDKCDHNob3AuZXhhbXBsZYIQ
d3d3LnNob3AuZXhhbXBsZYIQc2hvcC5leGFtcGxlLm5ldDAKBggqhkjOPQQDAgNI
ADBFAiEAqxx9g2TRiKVB+D2+mpzxk/yRGKUIhiyV09cEGM8WzCsCIFD5XDk7n6jC
Gc0QHCuFyQQJfEkl1RqwE5ic0F/y6m6W
-----END CERTIFICATE-----
`;
  const fallback: TLSCertificate = {
    source: { kind: "Gatehouse", namespace: "", name: "generated-default-certificate" },
    hostnames: [],
    certPem: "",
    keyPem: "",
  };
  const shop: TLSCertificate = {
    source: { kind: "Secret", namespace: "shop", name: "shop-tls" },
    hostnames: ["shop.example"],
    certPem,
    keyPem: "",
  };
  const tls: IngressTLS = {
    certificates: [fallback, shop],
    wanted: true,
    tlsHosts: ["shop.example"],
    problems: [],
  };
  const ref = { kind: "Ingress", namespace: "shop", name: "web" };

  test("a name the host's certificate covers joins it, and ssl-redirect's hosts", () => {
    const out = coverExtraNames(tls, [
      { name: "shop.example.net", host: "shop.example", annotation: "server-alias", ref },
      { name: "www.shop.example", host: "shop.example", annotation: "from-to-www-redirect", ref },
    ]);
    expect(out.certificates[0]).toBe(fallback);
    expect(out.certificates[1]?.hostnames).toEqual(["shop.example", "shop.example.net", "www.shop.example"]);
    expect(out.tlsHosts).toEqual(["shop.example", "shop.example.net", "www.shop.example"]);
    expect(out.problems).toEqual([]);
  });

  test("a name it does not cover gets the default certificate, with a warning", () => {
    const out = coverExtraNames(tls, [
      { name: "other.example", host: "shop.example", annotation: "server-alias", ref },
    ]);
    expect(out.certificates).toEqual(tls.certificates);
    expect(out.tlsHosts).toEqual(["shop.example"]);
    expect(out.problems.map((p) => [p.reason, p.severity])).toEqual([["CertificateHostMismatch", "warning"]]);
  });

  test("a host without a certificate of its own, or a name with one already: nothing changes", () => {
    const extra = [
      { name: "x.example", host: "plain.example", annotation: "server-alias" as const, ref },
      { name: "shop.example", host: "plain.example", annotation: "server-alias" as const, ref },
    ];
    expect(coverExtraNames(tls, extra)).toEqual(tls);
  });
});
