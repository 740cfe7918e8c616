import { describe, expect, test } from "bun:test";
import type { Backend, Filter, Route, SourceRef, VirtualHost } from "../../../model/index.ts";
import type { Service } from "../../../sources/schema/core.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";
import { editedRoute, readRouteEdits } from "./route-edits.ts";
import { routeToClusterIPs } from "./service-upstream.ts";
import { DEFAULT_BODY_SIZE, nginxSize, upstreamRequestFamily } from "./upstream-request.ts";

const ref: SourceRef = { kind: "Ingress", namespace: "shop", name: "web" };

function read(annotations: Record<string, string>) {
  const prefixed = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [NGINX_PREFIX + k, v]));
  const ingress = {
    metadata: { name: "web", namespace: "shop", annotations: prefixed },
  } as unknown as Ingress;
  return readRouteEdits(ingress, ref, [upstreamRequestFamily]);
}

function route(path = "/", backendIds = ["shop/web:80"]): Route {
  return {
    name: "ingress/shop/web/rule/0/path/0",
    source: ref,
    match: { path: { type: "Prefix", value: path }, headers: [], queryParams: [] },
    filters: [],
    action: {
      kind: "Forward",
      backends: backendIds.map((backendId) => ({ backendId, weight: 1, filters: [] })),
    },
  };
}

/** The route as the annotations leave it; the problems' messages. */
function applied(annotations: Record<string, string>, r: Route = route()) {
  const { edit, problems } = read(annotations);
  return { route: editedRoute(r, edit), problems: problems.map((p) => p.message) };
}

const hostsSent = (r: Route) =>
  r.action.kind === "Forward"
    ? r.action.backends.map((b) => b.filters.find((f) => f.kind === "URLRewrite")?.hostname)
    : [];

describe("upstream-vhost", () => {
  test("a host name, with a port, becomes each backend's Host", () => {
    expect(hostsSent(applied({ "upstream-vhost": "internal.example" }).route)).toEqual(["internal.example"]);
    expect(hostsSent(applied({ "upstream-vhost": " api.internal:8080 " }).route)).toEqual([
      "api.internal:8080",
    ]);
    expect(hostsSent(applied({ "upstream-vhost": "10.0.0.1" }).route)).toEqual(["10.0.0.1"]);
    expect(hostsSent(applied({ "upstream-vhost": "[fd00::1]:81" }).route)).toEqual(["[fd00::1]:81"]);
  });

  test("the variables known when nginx's configuration is written are filled in per backend", () => {
    const r = route("/", ["shop/web:80", "shop/web-canary:8080"]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx variables, not a template
    const got = applied({ "upstream-vhost": "$service_name.${namespace}.svc:$service_port" }, r).route;
    expect(hostsSent(got)).toEqual(["web.shop.svc:80", "web-canary.shop.svc:8080"]);
    expect(hostsSent(applied({ "upstream-vhost": "$ingress_name.example" }).route)).toEqual(["web.example"]);
  });

  test("the client's Host alone ($host, $http_host, $best_http_host) and an empty value ask for nothing", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx variables, not a template
    for (const v of ["$host", "$http_host", "${best_http_host}", "", "  "]) {
      const got = applied({ "upstream-vhost": v });
      expect([got.route, got.problems]).toEqual([route(), []]);
    }
  });

  test("not a host: refused naming annotation and value, the route left as it was", () => {
    for (const [v, why] of [
      ["http://internal.example", "not a URL"],
      ["internal example", "no spaces"],
      ["internal.example/path", "not a path"],
      ["$host.internal", '"$host" is not supported'],
      ["$request_uri", "not supported"],
      ["a$", '"$" is not supported'],
      ["internal.example:99999", "optional :port"],
      ["-bad-.example", "host name or IP address"],
      ["a\r\nX-Evil: 1", "no spaces"],
    ] as const) {
      const got = applied({ "upstream-vhost": v });
      expect(got.route).toEqual(route());
      expect(got.problems).toEqual([expect.stringContaining(`upstream-vhost ${JSON.stringify(v)}`)]);
      expect(got.problems[0]).toContain(why);
    }
  });

  test("a redirect route is left alone", () => {
    const r: Route = { ...route(), action: { kind: "Redirect", scheme: "https", statusCode: 308 } };
    expect(applied({ "upstream-vhost": "internal.example" }, r).route).toEqual(r);
  });
});

describe("x-forwarded-prefix", () => {
  const header: Filter = {
    kind: "RequestHeaderModifier",
    edits: { set: [{ name: "x-forwarded-prefix", value: "/api" }], add: [], remove: [] },
  };

  test("sent where rewrite-target differs from the route's path, as ingress-nginx's buildProxyPass does", () => {
    const got = applied({ "x-forwarded-prefix": "/api", "rewrite-target": "/" }, route("/api"));
    expect(got.route.filters).toEqual([header]);
  });

  test("not sent without rewrite-target, nor where the target is the path itself", () => {
    expect(applied({ "x-forwarded-prefix": "/api" }, route("/api")).route.filters).toEqual([]);
    expect(
      applied({ "x-forwarded-prefix": "/api", "rewrite-target": "/api" }, route("/api")).route.filters,
    ).toEqual([]);
    expect(
      applied({ "x-forwarded-prefix": "/api", "rewrite-target": "/api/" }, route("/api")).route.filters,
    ).toEqual([]);
    // A rewrite-target ingress-nginx's validator refuses is empty there.
    expect(
      applied({ "x-forwarded-prefix": "/api", "rewrite-target": "/a b" }, route("/x")).route.filters,
    ).toEqual([]);
  });

  test("CR/LF, captures and other characters are refused; empty asks for nothing", () => {
    for (const v of ["/a\r\nX-Evil: 1", "/a$1", "/a?b"]) {
      const got = applied({ "x-forwarded-prefix": v, "rewrite-target": "/" }, route("/x"));
      expect(got.route.filters).toEqual([]);
      expect(got.problems).toEqual([expect.stringContaining(`x-forwarded-prefix ${JSON.stringify(v)}`)]);
    }
    expect(applied({ "x-forwarded-prefix": "", "rewrite-target": "/" }, route("/x")).problems).toEqual([]);
  });
});

describe("enable-access-log, service-upstream, proxy-connect-timeout", () => {
  test("booleans as Go's strconv.ParseBool reads them", () => {
    for (const v of ["false", "False", "FALSE", "0", "f"])
      expect(applied({ "enable-access-log": v }).route.accessLog).toBe(false);
    for (const v of ["true", "1", "T"]) expect(applied({ "enable-access-log": v }).route).toEqual(route());
    expect(read({ "service-upstream": "true" }).edit?.serviceUpstream).toBe(true);
    expect(read({ "service-upstream": "false" }).edit).toBeUndefined();
  });

  test("other values are refused and change nothing", () => {
    for (const name of ["enable-access-log", "service-upstream"]) {
      const got = read({ [name]: "maybe" });
      expect(got.edit).toBeUndefined();
      expect(got.problems.map((p) => [p.reason, p.message])).toEqual([
        [
          "InvalidAnnotation",
          `annotation ${NGINX_PREFIX}${name} "maybe": must be "true" or "false"; not applied`,
        ],
      ]);
    }
  });

  test("proxy-connect-timeout: whole seconds from 1, the route's connect limit", () => {
    expect(applied({ "proxy-connect-timeout": "5" }).route.timeouts).toEqual({ connectMs: 5000 });
    for (const v of ["abc", "0", "-1", "1.5", "5s"]) {
      const got = read({ "proxy-connect-timeout": v });
      expect(got.edit).toBeUndefined();
      expect(got.problems[0]?.message).toContain(`proxy-connect-timeout ${JSON.stringify(v)}`);
    }
  });
});

describe("service-upstream: the Service's cluster IP", () => {
  const backend = (name: string, problem?: Backend["problem"]): Backend => ({
    id: `shop/${name}:80`,
    service: { namespace: "shop", name, port: 80 },
    protocol: "http",
    endpoints: problem ? [] : [{ address: "10.40.0.1", port: 8080 }],
    ...(problem ? { problem } : {}),
  });
  const service = (clusterIP?: string) =>
    ({ spec: { ...(clusterIP ? { clusterIP } : {}) } }) as unknown as Service;
  const index: SnapshotIndex = {
    routeFilters: new Map(),
    services: new Map([
      ["shop/web", service("10.96.0.10")],
      ["shop/idle", service("fd00::10")],
      ["shop/headless", service("None")],
      ["shop/bare", service()],
    ]),
    slicesByService: new Map(),
  };
  const backends = Object.fromEntries(
    [
      backend("web"),
      backend("idle", "NoReadyEndpoints"),
      backend("headless"),
      backend("bare"),
      backend("gone", "ServiceNotFound"),
    ].map((b) => [b.id, b]),
  );
  const hosts = (r: Route): VirtualHost[] => [{ hostname: "a.example", match: "Exact", routes: [r] }];
  const run = (ids: string[], serviceUpstream = true) =>
    routeToClusterIPs(
      hosts(route("/", ids)),
      new Map([["shop/web", serviceUpstream ? { serviceUpstream: true as const } : {}]]),
      backends,
      index,
    );
  const ids = (vhs: VirtualHost[]) => {
    const a = vhs[0]?.routes[0]?.action;
    return a?.kind === "Forward" ? a.backends.map((b) => b.backendId) : [];
  };

  test("the backend becomes the cluster IP and Service port, under an id of its own", () => {
    const got = run(["shop/web:80"]);
    expect(ids(got.virtualHosts)).toEqual(["shop/web:80@cluster-ip"]);
    expect(got.backends["shop/web:80@cluster-ip"]?.endpoints).toEqual([{ address: "10.96.0.10", port: 80 }]);
    expect(got.backends["shop/web:80"]).toEqual(backends["shop/web:80"] as Backend);
    expect(got.problems).toEqual([]);
  });

  test("with no ready pods it still forwards (kube-proxy answers, as in ingress-nginx)", () => {
    const got = run(["shop/idle:80"]);
    expect(got.backends["shop/idle:80@cluster-ip"]).toEqual({
      id: "shop/idle:80@cluster-ip",
      service: { namespace: "shop", name: "idle", port: 80 },
      protocol: "http",
      endpoints: [{ address: "fd00::10", port: 80 }],
    });
  });

  test("headless or no cluster IP: the endpoints are kept and the Ingress told; a missing Service stays", () => {
    const got = run(["shop/headless:80", "shop/bare:80", "shop/gone:80"]);
    expect(ids(got.virtualHosts)).toEqual(["shop/headless:80", "shop/bare:80", "shop/gone:80"]);
    expect(got.problems.map((p) => [p.object.name, p.reason, p.message])).toEqual([
      [
        "web",
        "InvalidAnnotation",
        `annotation ${NGINX_PREFIX}service-upstream: Service shop/headless has no cluster IP (clusterIP "None"); its endpoints are used instead`,
      ],
      [
        "web",
        "InvalidAnnotation",
        `annotation ${NGINX_PREFIX}service-upstream: Service shop/bare has no cluster IP; its endpoints are used instead`,
      ],
    ]);
  });

  test("an Ingress that does not ask keeps its endpoints", () => {
    expect(ids(run(["shop/web:80"], false).virtualHosts)).toEqual(["shop/web:80"]);
  });
});

describe("nginx sizes (client_max_body_size's syntax)", () => {
  test("bytes, or k, m, g in either case, as powers of 1024", () => {
    expect(["1024", "1k", "1K", "8m", "8M", "1g", "2G", " 16k "].map(nginxSize)).toEqual([
      1024,
      1024,
      1024,
      8 * 1024 ** 2,
      8 * 1024 ** 2,
      1024 ** 3,
      2 * 1024 ** 3,
      16 * 1024,
    ]);
    expect(nginxSize("0")).toBe(0);
    expect(nginxSize("0m")).toBe(0);
  });

  test("anything else is not a size: a sign, a fraction, another unit, `b` (nginx refuses it), spaces inside", () => {
    for (const v of ["", "10x", "-1", "+1", "1.5m", "1mb", "8b", "1 m", "m", "k8", "1t", "0x10", "１"])
      expect([v, nginxSize(v)]).toEqual([v, undefined]);
  });

  test("past 2^53 − 1 bytes (no exact count): refused; just below: taken", () => {
    expect(nginxSize("8388607g")).toBe(8388607 * 1024 ** 3);
    expect(nginxSize("8388608g")).toBeUndefined();
    expect(nginxSize("9007199254740991")).toBe(Number.MAX_SAFE_INTEGER);
    expect(nginxSize("9007199254740992")).toBeUndefined();
    expect(nginxSize("99999999999999999")).toBeUndefined();
  });
});

describe("proxy-body-size", () => {
  const max = (annotations: Record<string, string>) => applied(annotations).route.requestBodyMaxBytes;

  test("a size becomes the route's body limit in bytes", () => {
    expect(max({ "proxy-body-size": "8m" })).toBe(8 * 1024 * 1024);
    expect(max({ "proxy-body-size": "100" })).toBe(100);
    expect(applied({ "proxy-body-size": "1k" }).problems).toEqual([]);
  });

  test('"0", empty or absent: no limit, nothing said', () => {
    const asks: Record<string, string>[] = [{ "proxy-body-size": "0" }, { "proxy-body-size": " " }, {}];
    for (const a of asks) {
      expect(applied(a)).toEqual({ route: route(), problems: [] });
    }
  });

  test("a value that is not a size is reported, and ingress-nginx's default 1m limits instead (never none)", () => {
    for (const v of ["10x", "-5", "1.5m", "99999999999999999"]) {
      const got = applied({ "proxy-body-size": v });
      expect(got.route.requestBodyMaxBytes).toBe(DEFAULT_BODY_SIZE);
      expect(got.problems).toEqual([
        `annotation ${NGINX_PREFIX}proxy-body-size ${JSON.stringify(v)}: must be a size: a whole number of bytes, or one with k, m or g (0: no limit); ingress-nginx's default 1m limits these paths instead; not applied`,
      ]);
    }
    expect(DEFAULT_BODY_SIZE).toBe(1048576);
  });
});
