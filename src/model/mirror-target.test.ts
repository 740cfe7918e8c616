import { describe, expect, test } from "bun:test";
import {
  mirrorHostProblem,
  mirrorTargetProblem,
  parseMirrorPath,
  parseMirrorTarget,
} from "./mirror-target.ts";

const target = (text: string) => {
  const p = parseMirrorTarget(text);
  return p.ok ? p.target : p.message;
};

describe("parseMirrorTarget", () => {
  test("ingress-nginx's documented targets", () => {
    expect(target("https://test.env.com$request_uri")).toEqual({
      scheme: "https",
      hostname: "test.env.com",
      port: 443,
      path: "$request_uri",
    });
    expect(target("https://1.2.3.4$request_uri")).toMatchObject({ hostname: "1.2.3.4", port: 443 });
  });

  test("ports, default ports, case, IPv6, paths", () => {
    expect(target("HTTP://Mirror.NS.svc:8080")).toEqual({
      scheme: "http",
      hostname: "mirror.ns.svc",
      port: 8080,
      path: "",
    });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's ${name} variable syntax
    expect(target("http://[::1]:81/copy${uri}$is_args$args")).toEqual({
      scheme: "http",
      hostname: "[::1]",
      port: 81,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's ${name} variable syntax
      path: "/copy${uri}$is_args$args",
    });
    expect(target(" http://m/a/b?x=1 ")).toMatchObject({ port: 80, path: "/a/b?x=1" });
  });

  test("refuses other schemes, variables in the host, unknown variables, bad characters", () => {
    expect(target("ftp://m/")).toBe("scheme ftp is not http or https");
    expect(target("m.example$request_uri")).toBe("is not an http:// or https:// URL");
    expect(target("http://$host/x")).toBe("the host must be written out (a variable is not filled there)");
    expect(target("http://user@m/")).toContain("is not a host with an optional port");
    expect(target("http://m:0/")).toBe("port 0 is not within 1–65535");
    expect(target("http://m:70000/")).toBe("port 70000 is not within 1–65535");
    expect(target("http://m$remote_addr")).toBe("the path must start with / or $request_uri or $uri");
    expect(target("http://m/$remote_addr")).toContain(
      "$remote_addr is not one of the variables Gatehouse fills",
    );
    expect(target("http://m/$scheme")).toContain("$scheme is not one of");
    expect(target("http://m/a b")).toContain("has characters a URL path cannot hold");
    expect(target("http://m/a#b")).toBe("a fragment (#) is never sent");
    expect(target("http://m/a\r\nX-Evil: 1")).toBeString();
    expect(target("http://m/a\tb")).toContain("has characters a URL path cannot hold");
  });

  test("a long host is refused without running a regex over it", () => {
    const long = `http://${"a-".repeat(50_000)}!/`;
    const t0 = performance.now();
    expect(typeof target(long)).toBe("string");
    expect(performance.now() - t0).toBeLessThan(200);
  });
});

describe("checks of the proxy side", () => {
  test("mirrorTargetProblem passes what translate made and names what it would not", () => {
    const ok = parseMirrorTarget("http://m:81/x$request_uri");
    expect(ok.ok && mirrorTargetProblem(ok.target)).toBeUndefined();
    expect(mirrorTargetProblem({ scheme: "http", hostname: "m:80", port: 80, path: "" })).toContain(
      "is not a host name",
    );
    expect(mirrorTargetProblem({ scheme: "http", hostname: "m", port: 80, path: "$remote_user" })).toBe(
      "the path must start with / or $request_uri or $uri",
    );
    expect(parseMirrorPath("/a$request_uri").ok).toBe(true);
  });

  test("mirrorHostProblem takes a host with an optional port only", () => {
    expect(mirrorHostProblem("test.env.com")).toBeUndefined();
    expect(mirrorHostProblem("test.env.com:8443")).toBeUndefined();
    expect(mirrorHostProblem("[::1]:80")).toBeUndefined();
    expect(mirrorHostProblem("a b")).toBeDefined();
    expect(mirrorHostProblem("https://x")).toBeDefined();
    expect(mirrorHostProblem("x:99999")).toBe("port 99999 is not within 1–65535");
  });
});
