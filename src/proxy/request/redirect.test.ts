import { describe, expect, test } from "bun:test";
import type { RedirectAction } from "../../model/index.ts";
import { parseLocationTemplate } from "../../model/location-template.ts";
import { compile } from "../compile.ts";
import type { CompiledRedirect } from "../table.ts";
import { listener, match, model, route, vhost } from "../testing/model.ts";
import { buildLocation, type RedirectInput } from "./redirect.ts";

const base: CompiledRedirect = {
  kind: "Redirect",
  scheme: undefined,
  hostname: undefined,
  port: undefined,
  path: undefined,
  statusCode: 302,
};
const input: RedirectInput = {
  listenerScheme: "http",
  listenerPort: 8080,
  host: "a.example",
  path: "/foo/x",
  query: "?q=1",
  prefix: "/foo",
};

describe("buildLocation", () => {
  test("keeps everything, with the listener's port", () => {
    expect(buildLocation(base, input)).toBe("http://a.example:8080/foo/x?q=1");
  });
  test("omits the listener's port when it is the scheme default", () => {
    expect(buildLocation(base, { ...input, listenerPort: 80 })).toBe("http://a.example/foo/x?q=1");
  });
  test("a scheme change goes to that scheme's default port", () => {
    expect(buildLocation({ ...base, scheme: "https" }, input)).toBe("https://a.example/foo/x?q=1");
  });
  test("an explicit port is kept unless it is the default", () => {
    expect(buildLocation({ ...base, scheme: "https", port: 8443 }, input)).toBe(
      "https://a.example:8443/foo/x?q=1",
    );
    expect(buildLocation({ ...base, port: 80 }, input)).toBe("http://a.example/foo/x?q=1");
  });
  test("hostname and paths", () => {
    expect(
      buildLocation({ ...base, hostname: "b.example", path: { full: true, value: "/new" } }, input),
    ).toBe("http://b.example:8080/new?q=1");
    expect(buildLocation({ ...base, path: { full: false, value: "/bar" } }, input)).toBe(
      "http://a.example:8080/bar/x?q=1",
    );
  });
  test("with no host to name, the Location is relative", () => {
    expect(buildLocation(base, { ...input, host: "" })).toBe("/foo/x?q=1");
  });
});

describe("buildLocation for ingress-nginx's redirects", () => {
  test("stripTrailingSlash drops one final / of path and query, as nginx's $request_uri", () => {
    const strip: CompiledRedirect = { ...base, scheme: "https", port: 443, stripTrailingSlash: true };
    expect(buildLocation(strip, { ...input, path: "/a/", query: "" })).toBe("https://a.example/a");
    expect(buildLocation(strip, { ...input, path: "/", query: "" })).toBe("https://a.example");
    expect(buildLocation(strip, { ...input, path: "/a/", query: "?q=1" })).toBe("https://a.example/a/?q=1");
    expect(buildLocation(strip, { ...input, path: "/", query: "", host: "" })).toBe("/");
  });
  test("writeDefaultPort names the port even when it is the scheme's default", () => {
    expect(buildLocation({ ...base, scheme: "https", writeDefaultPort: true }, input)).toBe(
      "https://a.example:443/foo/x?q=1",
    );
    expect(buildLocation({ ...base, writeDefaultPort: true }, { ...input, listenerPort: 80 })).toBe(
      "http://a.example:80/foo/x?q=1",
    );
  });
  test("a literal location is filled in, without the query added", () => {
    const parsed = parseLocationTemplate("https://new.example$request_uri");
    if (!parsed.ok) throw new Error(parsed.message);
    expect(buildLocation({ ...base, location: parsed.parts }, input)).toBe("https://new.example/foo/x?q=1");
    const plain = parseLocationTemplate("https://new.example/landing");
    if (!plain.ok) throw new Error(plain.message);
    expect(buildLocation({ ...base, location: plain.parts }, input)).toBe("https://new.example/landing");
  });
  test("every variable", () => {
    const parsed = parseLocationTemplate(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's ${name} variable syntax
      "$scheme://${host}|$http_host|$server_port|$uri|$args|$query_string|$is_args",
    );
    if (!parsed.ok) throw new Error(parsed.message);
    const r = { ...base, location: parsed.parts };
    expect(buildLocation(r, input)).toBe("http://a.example|a.example:8080|8080|/foo/x|q=1|q=1|?");
    expect(buildLocation(r, { ...input, listenerPort: 80, query: "" })).toBe(
      "http://a.example|a.example|80|/foo/x|||",
    );
  });
});

describe("compiling a redirect", () => {
  const compiled = (action: RedirectAction) =>
    compile(model([listener([vhost("*", [route("r", match("/"), action)])])], [])).listeners[0]?.hosts.any
      ?.routes[0]?.action;
  test("the new fields are carried over, a literal location parsed once", () => {
    expect(
      compiled({
        kind: "Redirect",
        statusCode: 308,
        stripTrailingSlash: true,
        writeDefaultPort: true,
        location: "https://x.example$request_uri",
      }),
    ).toMatchObject({
      kind: "Redirect",
      stripTrailingSlash: true,
      writeDefaultPort: true,
      location: [{ text: "https://x.example" }, { variable: "request_uri" }],
    });
  });
  test("a location with a variable Gatehouse does not fill answers 500, never a guess", () => {
    expect(compiled({ kind: "Redirect", statusCode: 301, location: "https://$remote_addr/" })).toMatchObject({
      kind: "DirectResponse",
      status: 500,
    });
  });
});
