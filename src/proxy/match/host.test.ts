import { describe, expect, test } from "bun:test";
import { compile } from "../compile.ts";
import { listener, match, model, route, vhost } from "../testing/model.ts";
import { findVirtualHost, normaliseHost } from "./host.ts";

describe("normaliseHost", () => {
  test("strips the port, lower-cases and drops one trailing dot", () => {
    expect(normaliseHost("Foo.Example.COM.:8080")).toBe("foo.example.com");
    expect(normaliseHost("foo.example.com")).toBe("foo.example.com");
    expect(normaliseHost("10.0.0.1:80")).toBe("10.0.0.1");
  });

  test("keeps IPv6 brackets and drops the port", () => {
    expect(normaliseHost("[::1]:8080")).toBe("[::1]");
    expect(normaliseHost("[FE80::1]")).toBe("[fe80::1]");
  });

  test("anything that is not a host name gives the empty host", () => {
    for (const bad of [
      null,
      "",
      ":80",
      "a b",
      "a/b",
      "a@b",
      "a, b",
      "[::1",
      "[::1]x",
      "a..b",
      ".a",
      "a:99999x",
      "é",
    ]) {
      expect(normaliseHost(bad)).toBe("");
    }
  });
});

describe("findVirtualHost", () => {
  const r = (n: string) => route(n, match("/"), { kind: "DirectResponse", status: 200, body: n });
  const table = compile(
    model([
      listener([
        vhost("foo.com", [r("exact")]),
        vhost("*.foo.com", [r("one")], "WildcardOneLabel"),
        vhost("*.bar.foo.com", [r("any-long")], "WildcardAnyLabels"),
        vhost("*.example.org", [r("any")], "WildcardAnyLabels"),
        vhost("*", [r("catch-all")]),
      ]),
    ]),
  );
  const hosts = table.listeners[0]?.hosts;
  if (!hosts) throw new Error("no listener");
  const pick = (h: string) => findVirtualHost(hosts, h)?.routes[0]?.name;

  test("exact wins", () => expect(pick("foo.com")).toBe("exact"));
  test("one-label wildcard matches exactly one label", () => {
    expect(pick("a.foo.com")).toBe("one");
    expect(pick("a.b.foo.com")).toBe("catch-all");
  });
  test("the longest any-labels suffix wins", () => {
    expect(pick("x.bar.foo.com")).toBe("any-long");
    expect(pick("x.y.bar.foo.com")).toBe("any-long");
    expect(pick("a.b.c.example.org")).toBe("any");
  });
  test("a wildcard needs at least one label", () => expect(pick("example.org")).toBe("catch-all"));
  test("the empty host only reaches the catch-all", () => expect(pick("")).toBe("catch-all"));
});
