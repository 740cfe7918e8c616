import { describe, expect, test } from "bun:test";
import { customHeaderNameProblem } from "../../../model/http-syntax.ts";
import type { SourceRef } from "../../../model/index.ts";
import { customHeadersConfigMap } from "../../../sources/nginx-references.ts";
import type { ConfigMap } from "../../../sources/schema/core.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { configMapIndex, customHeadersEdits, withCustomHeaders } from "./custom-headers.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";

const ref: SourceRef = { kind: "Ingress", namespace: "shop", name: "web" };

function ingress(value: string | undefined): Ingress {
  const annotations = value === undefined ? {} : { [`${NGINX_PREFIX}custom-headers`]: value };
  return { metadata: { name: "web", namespace: "shop", annotations } } as unknown as Ingress;
}

function configMap(data: Record<string, string> | null, name = "headers", namespace = "shop"): ConfigMap {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data };
}

const ALLOWED = ["X-Frame-Options", "Content-Security-Policy", "X-Custom", "Content-Length", "Server"];

/** The headers set and the problems' messages, for the annotation value and ConfigMaps. */
function read(value: string | undefined, maps: ConfigMap[], allowed: readonly string[] = ALLOWED) {
  const { edit, problems } = customHeadersEdits(ingress(value), ref, configMapIndex(maps), allowed);
  const filter = edit?.filters?.[0];
  const set = filter?.kind === "ResponseHeaderModifier" ? filter.edits.set : undefined;
  return { set, filters: edit?.filters?.length ?? 0, problems: problems.map((p) => p.message) };
}

describe("custom-headers", () => {
  test("the ConfigMap's entries are set on the response, lower-case, sorted by name", () => {
    const r = read("shop/headers", [
      configMap({ "X-Frame-Options": "DENY", "Content-Security-Policy": "default-src 'self'" }),
    ]);
    expect(r.problems).toEqual([]);
    expect(r.filters).toBe(1);
    expect(r.set).toEqual([
      { name: "content-security-policy", value: "default-src 'self'" },
      { name: "x-frame-options", value: "DENY" },
    ]);
  });

  test("a bare name is the Ingress's namespace; $ is sent as written, as nginx.tmpl escapes it", () => {
    const r = read("headers", [configMap({ "X-Custom": "$remote_addr" })]);
    expect(r).toMatchObject({ set: [{ name: "x-custom", value: "$remote_addr" }], problems: [] });
  });

  test("the allowed list is compared case-insensitively; a name it lacks is refused, the others set", () => {
    const r = read("shop/headers", [configMap({ "x-frame-options": "DENY", "X-Other": "1" })]);
    expect(r.set).toEqual([{ name: "x-frame-options", value: "DENY" }]);
    expect(r.problems).toEqual([
      'annotation nginx.ingress.kubernetes.io/custom-headers "shop/headers": header "X-Other" of ConfigMap shop/headers is not allowed: --global-allowed-response-headers does not list it (ingress-nginx\'s global-allowed-response-headers); not applied',
    ]);
  });

  test("with the default (empty) allowed list every header is refused", () => {
    const r = read("shop/headers", [configMap({ "X-Frame-Options": "DENY" })], []);
    expect(r.set).toBeUndefined();
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toContain('header "X-Frame-Options" of ConfigMap shop/headers is not allowed');
  });

  test("a missing ConfigMap, another namespace's, a malformed value: refused, nothing set", () => {
    expect(read("shop/nope", [configMap({ "X-Custom": "1" })]).problems).toEqual([
      'annotation nginx.ingress.kubernetes.io/custom-headers "shop/nope": ConfigMap shop/nope not found; not applied',
    ]);
    const other = read("kube-system/headers", [configMap({ "X-Custom": "1" }, "headers", "kube-system")]);
    expect(other.set).toBeUndefined();
    expect(other.problems[0]).toContain("the ConfigMap must be in the Ingress's namespace (shop)");
    for (const bad of ["a/b/c", "shop/", "/headers", "Shop/Headers", "shop/head ers"]) {
      const r = read(bad, [configMap({ "X-Custom": "1" })]);
      expect(r.set).toBeUndefined();
      expect(r.problems[0]).toContain("must be <namespace>/<ConfigMap name> or <ConfigMap name>");
    }
  });

  test("an empty value asks for nothing, as ingress-nginx's string parser calls it missing", () => {
    expect(read("  ", [configMap({ "X-Custom": "1" })])).toEqual({
      set: undefined,
      filters: 0,
      problems: [],
    });
    expect(read(undefined, [])).toEqual({ set: undefined, filters: 0, problems: [] });
  });

  test("bad names and values are refused one by one: syntax, framing headers, CR/LF, tab, non-ASCII, empty", () => {
    const r = read("shop/headers", [
      configMap({
        "X.Dotted": "1",
        "Content-Length": "5",
        "X-Custom": "a\r\nInjected: yes",
        "X-Frame-Options": "",
        "Content-Security-Policy": "tab\there",
        Server: "caf\u00e9",
      }),
    ]);
    expect(r.set).toBeUndefined();
    const why = r.problems.map((m) => m.slice(m.indexOf("header ")));
    expect(why).toEqual([
      'header "Content-Length" of ConfigMap shop/headers: "Content-Length" frames the message (hop-by-hop or Content-Length): the gateway sets it; not applied',
      'header "Content-Security-Policy" of ConfigMap shop/headers: its value holds U+0009: values are printable ASCII only (as ingress-nginx); not applied',
      'header "Server" of ConfigMap shop/headers: its value holds U+00E9: values are printable ASCII only (as ingress-nginx); not applied',
      'header "X-Custom" of ConfigMap shop/headers: its value holds U+000D: values are printable ASCII only (as ingress-nginx); not applied',
      'header "X-Frame-Options" of ConfigMap shop/headers: its value is empty; not applied',
      'header "X.Dotted" of ConfigMap shop/headers: "X.Dotted" is not a header name (letters, digits, - and _); not applied',
    ]);
  });

  test("two keys naming one header: the first in name order is set, the other refused", () => {
    const r = read("shop/headers", [configMap({ "X-Custom": "A", "x-custom": "b" })]);
    expect(r.set).toEqual([{ name: "x-custom", value: "A" }]);
    expect(r.problems[0]).toContain('header "x-custom" of ConfigMap shop/headers names a header already set');
  });

  test("many refused entries: ten reported, then one count of the rest", () => {
    const data = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`X-N${i}`, "v"]));
    const r = read("shop/headers", [configMap(data)]);
    expect(r.problems).toHaveLength(11);
    expect(r.problems[10]).toContain("15 more entries of ConfigMap shop/headers refused");
  });

  test("a ConfigMap without data sets nothing and says nothing", () => {
    expect(read("shop/headers", [configMap(null)])).toEqual({ set: undefined, filters: 0, problems: [] });
  });

  test("a ConfigMap the source could not read is reported as such, not read as empty", () => {
    const why = "the gateway is not allowed to list ConfigMaps";
    const unreadable = [{ kind: "ConfigMap" as const, namespace: "shop", name: "headers", why }];
    const index = configMapIndex([], unreadable);
    const { edit, problems } = customHeadersEdits(ingress("shop/headers"), ref, index, ALLOWED);
    expect(edit).toBeUndefined();
    expect(problems.map((p) => p.message)).toEqual([
      `annotation nginx.ingress.kubernetes.io/custom-headers "shop/headers": ConfigMap shop/headers could not be read: ${why}; not applied`,
    ]);
    // An unreadable Secret of the same name is not the ConfigMap.
    const secret = configMapIndex([], [{ kind: "Secret", namespace: "shop", name: "headers", why }]);
    expect(customHeadersEdits(ingress("shop/headers"), ref, secret, ALLOWED).problems[0]?.message).toContain(
      "ConfigMap shop/headers not found",
    );
  });

  test("kept per Ingress while its ConfigMap and the allowed list stay; read again when either changes", () => {
    const ing = ingress("shop/headers");
    const a = configMapIndex([configMap({ "X-Custom": "1" })]);
    const first = customHeadersEdits(ing, ref, a, ALLOWED);
    expect(customHeadersEdits(ing, ref, a, [...ALLOWED])).toBe(first);
    const changed = customHeadersEdits(ing, ref, configMapIndex([configMap({ "X-Custom": "2" })]), ALLOWED);
    expect(changed).not.toBe(first);
    expect(changed.edit?.filters).toEqual([
      {
        kind: "ResponseHeaderModifier",
        edits: { set: [{ name: "x-custom", value: "2" }], add: [], remove: [] },
      },
    ]);
    const narrowed = customHeadersEdits(ing, ref, configMapIndex([configMap({ "X-Custom": "2" })]), []);
    expect(narrowed.edit).toBeUndefined();
  });

  test("the ConfigMap an Ingress names, for the Kubernetes source", () => {
    expect(customHeadersConfigMap(ingress("shop/headers"))).toBe("shop/headers");
    expect(customHeadersConfigMap(ingress("headers"))).toBe("shop/headers");
    expect(customHeadersConfigMap(ingress("other/headers"))).toBeUndefined();
    expect(customHeadersConfigMap(ingress(undefined))).toBeUndefined();
  });

  test("the allowed list's names: ingress-nginx's header pattern, no framing header", () => {
    expect(customHeaderNameProblem("X-Frame-Options")).toBeUndefined();
    expect(customHeaderNameProblem("X_Under")).toBeUndefined();
    expect(customHeaderNameProblem("X Space")).toContain("is not a header name");
    expect(customHeaderNameProblem("Transfer-Encoding")).toContain("frames the message");
  });

  test("the headers' filter comes after the other families' filters", () => {
    const cors = { filters: [{ kind: "URLRewrite" as const, hostname: "h" }] };
    const headers = {
      filters: [{ kind: "ResponseHeaderModifier" as const, edits: { set: [], add: [], remove: [] } }],
    };
    expect(withCustomHeaders(cors, headers)?.filters?.map((f) => f.kind)).toEqual([
      "URLRewrite",
      "ResponseHeaderModifier",
    ]);
    expect(withCustomHeaders(cors, undefined)).toBe(cors);
    expect(withCustomHeaders(undefined, headers)).toBe(headers);
  });
});
