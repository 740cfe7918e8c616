import { describe, expect, test } from "bun:test";
import type { SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { redirectFamily } from "./redirects.ts";
import { readRouteEdits } from "./route-edits.ts";

const ref: SourceRef = { kind: "Ingress", namespace: "shop", name: "web" };
const P = "nginx.ingress.kubernetes.io/";

function read(annotations: Record<string, string>) {
  const withPrefix = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [P + k, v]));
  const ingress = {
    metadata: { name: "web", namespace: "shop", annotations: withPrefix },
  } as unknown as Ingress;
  const edits = readRouteEdits(ingress, ref, [redirectFamily]);
  return { action: edits.edit?.action, problems: edits.problems.map((p) => p.message) };
}

describe("permanent-redirect and temporal-redirect", () => {
  test("the URL as written, 301 or 302 by default", () => {
    expect(read({ "permanent-redirect": " https://new.example$request_uri " })).toEqual({
      action: { kind: "Redirect", location: "https://new.example$request_uri", statusCode: 301 },
      problems: [],
    });
    expect(read({ "temporal-redirect": "http://x.example/a?b=c" }).action).toEqual({
      kind: "Redirect",
      location: "http://x.example/a?b=c",
      statusCode: 302,
    });
  });

  test("codes: the redirect codes of each kind; any other is refused and the default used", () => {
    const code = (kind: "permanent" | "temporal", value: string) =>
      read({ [`${kind}-redirect`]: "https://x.example/", [`${kind}-redirect-code`]: value });
    expect(code("permanent", "308").action).toMatchObject({ statusCode: 308 });
    expect(code("temporal", "307").action).toMatchObject({ statusCode: 307 });
    for (const [kind, value, fallback] of [
      ["permanent", "300", 301],
      ["permanent", "abc", 301],
      ["permanent", "309", 301],
      ["temporal", "308", 302],
      ["temporal", "304", 302],
    ] as const) {
      const r = code(kind, value);
      expect(r.action).toMatchObject({ statusCode: fallback });
      expect(r.problems).toHaveLength(1);
      expect(r.problems[0]).toContain(`${kind}-redirect-code "${value}"`);
    }
  });

  test("temporal-redirect wins; the permanent one is not read", () => {
    const r = read({
      "temporal-redirect": "https://t.example/",
      "permanent-redirect": "not a url",
      "permanent-redirect-code": "999",
    });
    expect(r).toEqual({
      action: { kind: "Redirect", location: "https://t.example/", statusCode: 302 },
      problems: [],
    });
  });

  test("URLs that are not absolute http(s) with a host are refused, and nothing redirects", () => {
    for (const url of [
      "/relative",
      "ftp://x.example/",
      "https://",
      "https:///path",
      "HTTPS://x.example/",
      "https://x.example/a b",
      'https://x.example/"',
      "https://x.example/é",
      "https://x.example/$remote_addr",
      "https://x.example/${uri",
      "https://x.example/$",
    ]) {
      const r = read({ "permanent-redirect": url });
      expect(r.action).toBeUndefined();
      expect(r.problems).toHaveLength(1);
      expect(r.problems[0]).toContain(`permanent-redirect ${JSON.stringify(url)}`);
    }
  });

  test("variables Gatehouse fills are accepted where nginx would expand them", () => {
    for (const url of [
      "$scheme://$host$request_uri",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's ${name} variable syntax
      "https://${host}.example$uri$is_args$args",
      "https://x.example:$server_port/",
    ])
      expect(read({ "permanent-redirect": url }).problems).toEqual([]);
  });

  test("an empty URL asks for nothing", () => {
    expect(read({ "permanent-redirect": " ", "temporal-redirect": "" })).toEqual({
      action: undefined,
      problems: [],
    });
  });

  test("relative-redirects: a boolean, changing nothing", () => {
    expect(read({ "relative-redirects": "true" })).toEqual({ action: undefined, problems: [] });
    expect(read({ "relative-redirects": "yes" }).problems[0]).toContain('relative-redirects "yes"');
  });
});
