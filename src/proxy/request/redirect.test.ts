import { describe, expect, test } from "bun:test";
import type { CompiledRedirect } from "../table.ts";
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
