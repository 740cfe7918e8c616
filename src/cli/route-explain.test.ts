/** `gatehouse routes --host --path`: which route serves a request and why not the others. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { forEachFront } from "../../test/helpers/fronts.ts";
import { freePort } from "../../test/helpers/ports.ts";
import { startTestGateway, type TestGateway } from "../../test/helpers/test-gateway.ts";
import type { GatewayModel } from "../model/index.ts";
import { setLogSink } from "../observability/logger.ts";
import { loadFiles } from "../sources/file/index.ts";
import { translate } from "../translate/translate.ts";
import { explainRoute, type RouteQuery, routeQueryArgs } from "./route-explain.ts";

/** A Gateway with a hostname-less listener and a `*.shop.test` listener on one port, and routes on both. */
const manifestsFor = (port: number) => `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: gatehouse }
spec: { controllerName: gatehouse.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: shop }
spec:
  gatewayClassName: gatehouse
  listeners:
    - { name: any, port: ${port}, protocol: HTTP }
    - { name: shops, port: ${port}, protocol: HTTP, hostname: "*.shop.test" }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: api, namespace: shop }
spec:
  parentRefs: [{ name: gw, sectionName: shops }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /api }, method: POST, headers: [{ name: x-canary, value: "1" }] }]
      backendRefs: [{ name: canary, port: 80 }]
    - matches: [{ path: { type: PathPrefix, value: /api }, queryParams: [{ name: v, value: "2" }] }]
      backendRefs: [{ name: v2, port: 80 }]
    - matches: [{ path: { type: PathPrefix, value: /api } }]
      backendRefs: [{ name: api, port: 80 }]
    - matches: [{ path: { type: PathPrefix, value: / } }]
      backendRefs: [{ name: web, port: 80 }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: catchall, namespace: shop }
spec:
  parentRefs: [{ name: gw, sectionName: any }]
  rules: [{ backendRefs: [{ name: web, port: 80 }] }]
${["canary", "v2", "api", "web"]
  .map(
    (s) => `---
apiVersion: v1
kind: Service
metadata: { name: ${s}, namespace: shop }
spec: { ports: [{ port: 80 }] }
`,
  )
  .join("")}`;
const manifests = manifestsFor(8080);

const dir = mkdtempSync(join(tmpdir(), "gatehouse-route-explain-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, "all.yaml"), manifests);
const loaded = await loadFiles([join(dir, "all.yaml")]);
const translated: GatewayModel = translate(loaded.snapshot).model;
const model = () => translated;

const ask = (host: string, path: string, more: Partial<RouteQuery> = {}): RouteQuery => ({
  host,
  path,
  method: "GET",
  headers: new Map(),
  ...more,
});

async function cli(...args: string[]) {
  const proc = Bun.spawn(["bun", join(import.meta.dir, "../main.ts"), "routes", ...args], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { out, code };
}

describe("explainRoute", () => {
  test("the first matching route serves; each other one says which condition fails or that it comes later", () => {
    const { text, served } = explainRoute(ask("a.shop.test", "/api/orders"), model());
    expect(served).toBe(true);
    const lines = text.split("\n");
    const line = (rule: number) => lines.find((l) => l.includes(`httproute/shop/api/rule/${rule}/`)) ?? "";
    expect(line(0)).toContain("✘");
    expect(line(0)).toContain("method GET is not POST");
    expect(line(1)).toContain("needs query parameter v");
    expect(line(2)).toContain("✔");
    expect(line(2)).toContain("shop/api:80");
    expect(line(3)).toContain("matches too, but httproute/shop/api/rule/2/match/0 comes first");
    // Listener isolation: the *.shop.test listener's virtual host wins over the catch-all listener's.
    expect(text).toContain('host "a.shop.test" → virtual host *.shop.test (wildcard; more specific than *)');
  });

  test("method, header and query conditions are checked as the proxy checks them", () => {
    const m = model();
    const canary = explainRoute(
      ask("a.shop.test", "/api", { method: "POST", headers: new Map([["x-canary", "1"]]) }),
      m,
    ).text;
    expect(canary).toMatch(/✔ httproute\/shop\/api\/rule\/0\/\S+ .*shop\/canary:80/);
    const wrong = explainRoute(
      ask("a.shop.test", "/api", { method: "POST", headers: new Map([["x-canary", "2"]]) }),
      m,
    ).text;
    expect(wrong).toContain("header x-canary does not match");
    expect(explainRoute(ask("a.shop.test", "/api?v=2"), m).text).toMatch(/✔ httproute\/shop\/api\/rule\/1\//);
  });

  test("a host only the catch-all takes; a path the proxy refuses; the path as it is routed", () => {
    const m = model();
    const other = explainRoute(ask("elsewhere.test", "/api"), m).text;
    expect(other).toContain("(catch-all)");
    expect(other).toMatch(/✔ httproute\/shop\/catchall\//);
    expect(explainRoute(ask("a.shop.test", "/a%2fb"), m)).toEqual({
      text: "GET a.shop.test/a%2fb\n\nthe gateway answers 400: the path is refused before routing\n",
      served: false,
    });
    expect(explainRoute(ask("a.shop.test", "//api//x"), m).text).toContain("(routed as /api/x)");
  });
});

describe("routeQueryArgs", () => {
  test("takes its flags out and leaves the others", () => {
    const r = routeQueryArgs(["-f", "x.yaml", "--host", "A.test", "--path=/p", "--header", "X-Y: 1"]);
    expect(r).toEqual({
      query: { host: "A.test", path: "/p", method: "GET", headers: new Map([["x-y", "1"]]) },
      rest: ["-f", "x.yaml"],
    });
    expect(routeQueryArgs(["-f", "x.yaml"])).toEqual({ rest: ["-f", "x.yaml"] });
    expect(routeQueryArgs(["--path", "p"])).toBe('--path "p" must start with /');
    expect(routeQueryArgs(["--host"])).toBe("--host needs a value");
    expect(routeQueryArgs(["--method", "POST"])).toBe("--method and --header go with --host or --path");
  });
});

describe("gatehouse routes --host --path (the CLI)", () => {
  test("served: exit 0 with the explanation; served by nothing: exit 1", async () => {
    const yes = await cli("-f", join(dir, "all.yaml"), "--host", "a.shop.test", "--path", "/api/x");
    expect(yes.code).toBe(0);
    expect(yes.out).toContain("✔ httproute/shop/api/rule/2/match/0");
    const examples = join(import.meta.dir, "../../examples");
    const no = await cli("-f", examples, "--host", "nowhere.test", "--path", "/");
    expect(no.code).toBe(1);
    expect(no.out).toContain('no virtual host takes "nowhere.test": 404');
  });
});

forEachFront("gatehouse routes --admin URL (a running gateway)", (front) => {
  let gw: TestGateway | undefined;
  let restore: ((line: string) => void) | undefined;
  afterAll(async () => {
    await gw?.gw.stop();
    if (restore) setLogSink(restore);
  });

  test("the table and the explanation from the gateway's /debug/model; an unreachable one: exit 1", async () => {
    restore = setLogSink(() => {});
    // A live gateway binds the Gateway's port: a free one, in a folder of its own.
    const live = join(dir, `live-${front}`);
    mkdirSync(live);
    writeFileSync(join(live, "all.yaml"), manifestsFor(await freePort()));
    gw = await startTestGateway(["--dir", live], ["--front", front]);
    const admin = `http://127.0.0.1:${gw.gw.admin.port}`;
    const table = await cli("--admin", admin);
    expect(table.code).toBe(0);
    expect(table.out).toContain("*.shop.test  /api*");
    const yes = await cli("--admin", `${admin}/`, "--host", "a.shop.test", "--path", "/api?v=2");
    expect(yes.code).toBe(0);
    expect(yes.out).toMatch(/✔ httproute\/shop\/api\/rule\/1\/\S+ .*shop\/v2:80/);
    const refused = await cli("--admin", "http://127.0.0.1:1", "--host", "a.shop.test");
    expect(refused.code).toBe(1);
    expect(await cli("--admin", admin, "-f", "x.yaml").then((r) => r.code)).toBe(2);
  });
});
