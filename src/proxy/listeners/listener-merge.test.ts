import { describe, expect, test } from "bun:test";
import type { Listener } from "../../model/index.ts";
import { compile } from "../compile.ts";
import { findVirtualHost } from "../match/host.ts";
import { listener, match, model, route, vhost } from "../testing/model.ts";
import { groupListeners, specificity } from "./listener-merge.ts";

const say = (body: string) => ({ kind: "DirectResponse", status: 200, body }) as const;

/** A listener whose virtual hosts each have one route named `<listener>@<host>`. */
function named(name: string, hosts: string[], extra: Partial<Listener> = {}): Listener {
  return listener(
    hosts.map((h) => vhost(h, [route(`${name}@${h}`, match("/"), say(name))])),
    { name, port: 80, ...extra },
  );
}

function served(listeners: Listener[], warnings: string[] = []) {
  const tables = compile(model(listeners)).listeners;
  return groupListeners(tables, "0.0.0.0", (w) => warnings.push(w));
}

describe("groupListeners", () => {
  test("listeners on one address and port become one table; other addresses stay apart", () => {
    const out = served([
      named("a", ["a.example"]),
      named("b", ["b.example"]),
      named("c", ["c.example"], { address: "127.0.0.2" }),
      named("d", ["d.example"], { address: "", port: 8080 }),
    ]);
    expect([...out.keys()]).toEqual(["127.0.0.1:80", "127.0.0.2:80", "0.0.0.0:8080"]);
    const shared = out.get("127.0.0.1:80");
    expect(shared?.name).toBe("a,b");
    expect([...(shared?.hosts.exact.keys() ?? [])]).toEqual(["a.example", "b.example"]);
  });

  test("the same host from two listeners: the more specific listener keeps it (isolation)", () => {
    // GatewayHTTPListenerIsolation "intersecting hostnames": the hostname-less listener's route names
    // every host; each more specific listener's own routes must win on its hosts.
    const warnings: string[] = [];
    const all = ["bar.com", "*.example.com", "*.foo.example.com", "abc.foo.example.com"];
    const out = served(
      [
        named("empty", all),
        named("wildcard", all.slice(1), { hostname: "*.example.com" }),
        named("foo", all.slice(2), { hostname: "*.foo.example.com" }),
        named("abc", all.slice(3), { hostname: "abc.foo.example.com" }),
      ],
      warnings,
    );
    const hosts = out.get("127.0.0.1:80")?.hosts;
    if (hosts === undefined) throw new Error("no table");
    const owner = (h: string) => findVirtualHost(hosts, h)?.routes[0]?.name.split("@")[0];
    expect(owner("bar.com")).toBe("empty");
    expect(owner("bar.example.com")).toBe("wildcard");
    expect(owner("bar.foo.example.com")).toBe("foo");
    expect(owner("abc.foo.example.com")).toBe("abc");
    expect(warnings).toEqual([]);
  });

  test("a hostname-less listener never takes a host from a listener named for it", () => {
    // The route on the catch-all listener names x.example exactly; the x.example listener is still the
    // owner, even though both virtual hosts are the same exact name.
    const out = served([named("any", ["x.example"]), named("x", ["x.example"], { hostname: "x.example" })]);
    expect(out.get("127.0.0.1:80")?.hosts.exact.get("x.example")?.routes[0]?.name).toBe("x@x.example");
  });

  test("equally specific listeners with one host: the first is kept, with a warning", () => {
    const warnings: string[] = [];
    const out = served(
      [
        named("one", ["x.example"], { hostname: "x.example" }),
        named("two", ["x.example"], { hostname: "x.example" }),
      ],
      warnings,
    );
    const vh = out.get("127.0.0.1:80")?.hosts.exact.get("x.example");
    expect(vh?.routes[0]?.name).toBe("one@x.example");
    expect(warnings.join()).toContain("one and two");
  });

  test("a listener with another protocol on the socket is left out, with a warning", () => {
    const warnings: string[] = [];
    const cert = {
      source: { kind: "Secret", namespace: "t", name: "c" },
      hostnames: ["s.example"],
      certPem: "C",
      keyPem: "K",
    };
    const out = served(
      [
        named("plain", ["p.example"]),
        named("tls", ["s.example"], { protocol: "HTTPS", tls: { certificates: [cert] } }),
      ],
      warnings,
    );
    expect(out.get("127.0.0.1:80")?.name).toBe("plain");
    expect(out.get("127.0.0.1:80")?.hosts.exact.has("s.example")).toBe(false);
    expect(warnings.join()).toContain("tls (HTTPS)");
  });

  test("merged HTTPS listeners offer every listener's certificates", () => {
    const cert = (n: string) => ({
      source: { kind: "Secret", namespace: "t", name: n },
      hostnames: [n],
      certPem: n,
      keyPem: n,
    });
    const out = served([
      named("a", ["a.example"], { protocol: "HTTPS", port: 443, tls: { certificates: [cert("a.example")] } }),
      named("b", ["b.example"], { protocol: "HTTPS", port: 443, tls: { certificates: [cert("b.example")] } }),
    ]);
    const t = out.get("127.0.0.1:443");
    expect(t?.tls?.certificates.map((c) => c.certPem)).toEqual(["a.example", "b.example"]);
    expect(t?.scheme).toBe("https");
  });
});

describe("specificity", () => {
  test("narrower listener hostnames score higher", () => {
    expect(specificity(undefined)).toBe(-1);
    expect(specificity("a.b.c")).toBe(7);
    expect(specificity("*.b.c")).toBe(6);
    expect(specificity("*.foo.example.com")).toBe(8);
    expect(specificity("abc.foo.example.com")).toBe(9);
    expect(specificity("b.c")).toBe(5);
  });
});

describe("the fallback certificate of an HTTPS port", () => {
  const cert = (name: string, hostnames: string[]) => ({
    source: { kind: "Secret", namespace: "ns", name },
    hostnames,
    certPem: `${name}-cert`,
    keyPem: `${name}-key`,
  });
  const https = (name: string, hostnames: string[], hostname?: string, withDefault = true) =>
    named(name, [hostname ?? "*"], {
      protocol: "HTTPS",
      port: 443,
      ...(hostname ? { hostname } : {}),
      tls: {
        certificates: [cert(name, hostnames)],
        ...(withDefault ? { defaultCertificate: cert("default", []) } : {}),
      },
    });
  const first = (listeners: Listener[]) =>
    [...served(listeners).values()][0]?.tls?.certificates.map((c) => c.source.name);

  test("a listener for every host is the fallback, wherever it stands", () => {
    expect(first([https("a", ["a.example"], "a.example"), https("any", [])])).toEqual(["any", "a"]);
  });

  test("listeners that all have hostnames: the default certificate, never the first listener's", () => {
    expect(first([https("a", ["a.example"], "a.example"), https("b", ["b.example"], "b.example")])).toEqual([
      "default",
      "a",
      "b",
    ]);
    expect(first([https("a", ["a.example"], "a.example")])).toEqual(["default", "a"]);
  });

  test("no default certificate: the first listener's, as before", () => {
    expect(first([https("a", ["a.example"], "a.example", false)])).toEqual(["a"]);
  });
});
