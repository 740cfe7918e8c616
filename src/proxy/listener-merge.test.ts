import { describe, expect, test } from "bun:test";
import type { Listener } from "../model/types.ts";
import { compile } from "./compile.ts";
import { groupListeners, specificity } from "./listener-merge.ts";
import { findVirtualHost } from "./match/host.ts";
import { listener, match, model, route, vhost } from "./testing/model.ts";

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
        named("wildcard", all.slice(1)),
        named("foo", all.slice(2)),
        named("abc", all.slice(3)),
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

  test("equally specific listeners with one host: the first is kept, with a warning", () => {
    const warnings: string[] = [];
    const out = served([named("one", ["x.example"]), named("two", ["x.example"])], warnings);
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
  const of = (hosts: string[]) =>
    specificity(compile(model([named("l", hosts)])).listeners[0]?.hosts ?? fail());
  const fail = (): never => {
    throw new Error("no listener");
  };
  test("narrower covering patterns score higher", () => {
    expect(of(["*"])).toBe(-1);
    expect(of([])).toBe(-2);
    expect(of(["a.b.c"])).toBe(7);
    expect(of(["*.b.c"])).toBe(6);
    expect(of(["x.b.c", "y.b.c"])).toBe(6);
    expect(of(["*.b.c", "a.x.b.c"])).toBe(6);
    expect(of(["bar.com", "*.example.com"])).toBe(4);
    expect(of(["a.org", "b.com"])).toBe(2);
  });
});
