import { describe, expect, test } from "bun:test";
import type { GatewayModel, Route } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { DEFAULT_HTTP_LISTENER } from "../../common/names.ts";
import { applySSLRedirects, sslRedirectPlan } from "./ssl-redirect.ts";

const P = "nginx.ingress.kubernetes.io/";

function ingress(name: string, annotations: Record<string, string>): Ingress {
  const withPrefix = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [P + k, v]));
  return { metadata: { name, namespace: "shop", annotations: withPrefix } } as unknown as Ingress;
}

function route(name: string, action: Route["action"]): Route {
  return {
    name,
    source: { kind: "Ingress", namespace: "shop", name },
    match: { path: { type: "Prefix", value: "/" }, headers: [], queryParams: [] },
    filters: [],
    action,
  };
}

const forward: Route["action"] = { kind: "Forward", backends: [{ backendId: "b", weight: 1, filters: [] }] };

function actions(ingresses: Ingress[], routes: Route[]) {
  const model: GatewayModel = {
    listeners: [
      {
        name: DEFAULT_HTTP_LISTENER,
        address: "",
        port: 8080,
        protocol: "HTTP",
        source: { kind: "Gatehouse", namespace: "", name: "default" },
        virtualHosts: [{ hostname: "a.example", match: "Exact", routes }],
      },
    ],
    backends: {},
  };
  const { plan, problems } = sslRedirectPlan(ingresses, ["a.example"], 443, true);
  const out = applySSLRedirects(model, plan).listeners[0]?.virtualHosts[0]?.routes.map((r) => r.action);
  return { out, problems: problems.map((p) => p.message) };
}

describe("ssl-redirect with ingress-nginx's trailing slash and port", () => {
  test("one trailing slash dropped by default; kept with preserve-trailing-slash; the port always with use-port-in-redirects", () => {
    const r = actions(
      [
        ingress("plain", {}),
        ingress("kept", { "preserve-trailing-slash": "true", "use-port-in-redirects": "true" }),
      ],
      [route("plain", forward), route("kept", forward)],
    );
    expect(r.out).toEqual([
      { kind: "Redirect", scheme: "https", port: 443, stripTrailingSlash: true, statusCode: 308 },
      { kind: "Redirect", scheme: "https", port: 443, writeDefaultPort: true, statusCode: 308 },
    ]);
    expect(r.problems).toEqual([]);
  });

  test("a route that already redirects is left alone (nginx's return runs first)", () => {
    const own = { kind: "Redirect" as const, location: "https://x.example/", statusCode: 301 };
    expect(actions([ingress("moved", { "force-ssl-redirect": "true" })], [route("moved", own)]).out).toEqual([
      own,
    ]);
  });

  test("a value that is not a boolean is a warning, and the default applies", () => {
    const r = actions([ingress("odd", { "preserve-trailing-slash": "maybe" })], [route("odd", forward)]);
    expect(r.out?.[0]).toMatchObject({ stripTrailingSlash: true });
    expect(r.problems).toEqual([
      'annotation nginx.ingress.kubernetes.io/preserve-trailing-slash: "maybe" must be "true" or "false"; ignored',
    ]);
  });

  test("booleans read as Go's ParseBool: 1 and False count, tRuE does not", () => {
    const one = actions([ingress("one", { "ssl-redirect": "False" })], [route("one", forward)]);
    expect([one.out, one.problems]).toEqual([[forward], []]);
    const r = actions([ingress("odd", { "preserve-trailing-slash": "1" })], [route("odd", forward)]);
    expect(r.out?.[0]).toMatchObject({ kind: "Redirect" });
    expect(r.out?.[0]).not.toHaveProperty("stripTrailingSlash");
    expect(actions([ingress("x", { "ssl-redirect": "tRuE" })], [route("x", forward)]).problems).toHaveLength(
      1,
    );
  });
});
