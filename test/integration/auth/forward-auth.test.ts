/**
 * Forward authentication end to end, on both fronts: `gatehouse serve` on a folder whose Ingresses carry
 * ingress-nginx's `auth-url`/`auth-signin`/`auth-response-headers` (and AuthPolicies with
 * `spec.externalAuth`), a real session-cookie login service (test/helpers/forward-auth-service.ts) and an
 * echo backend. The browser's flow: sent to sign in, signed in, served with its identity, signed out,
 * expired. Then the failure matrix: a slow, redirecting, huge, refusing or absent service answers 503 or
 * the refusal, and the backend never sees the request.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { type LogLevel, setLogLevel } from "../../../src/observability/logger.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { type ForwardAuthService, startForwardAuthService } from "../../helpers/forward-auth-service.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const HOST = "fa.test";

function manifests(echoPort: number, auth: string, closedPort: number): string {
  const ingress = (name: string, path: string, annotations: Record<string, string>) => `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: fa
  annotations: ${JSON.stringify(Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v])))}
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${HOST}
      http:
        paths:
          - { path: ${path}, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
`;
  const policy = (name: string, externalAuth: Record<string, unknown>) => `---
apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: ${name}, namespace: fa }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: ${name} }]
  externalAuth: ${JSON.stringify(externalAuth)}
`;
  return `apiVersion: v1
kind: Service
metadata: { name: web, namespace: fa }
spec: { ports: [{ port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: web-1, namespace: fa, labels: { kubernetes.io/service-name: web } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1] }]
ports: [{ port: ${echoPort} }]
${ingress("app", "/app", {
  "auth-url": `${auth}/check`,
  "auth-signin": `${auth}/login`,
  "auth-response-headers": "X-Auth-Request-User, X-Auth-Request-Email",
})}${ingress("plain401", "/plain401", { "auth-url": `${auth}/check` })}${ingress("redirect", "/redirect", { "auth-url": `${auth}/redirect` })}${ingress("huge", "/huge", { "auth-url": `${auth}/huge` })}${ingress("gone", "/gone", { "auth-url": `http://127.0.0.1:${closedPort}/check` })}${ingress("forbidden", "/forbidden", { "auth-url": `${auth}/forbidden`, "auth-always-set-cookie": "true" })}${ingress(
  "method",
  "/method",
  {
    "auth-url": `${auth}/check`,
    "auth-method": "POST",
    "auth-request-redirect": "https://$host/back",
    "auth-signin": `${auth}/login?app=1`,
    "auth-signin-redirect-param": "return_to",
  },
)}${ingress("kept", "/kept", {
  "auth-url": `${auth}/check`,
  "auth-cache-key": "$cookie_session",
  "auth-cache-duration": "200 202 1m, 401 1s",
})}${ingress("office", "/office", {
  "auth-url": `${auth}/check`,
  "auth-response-headers": "X-Auth-Request-User",
  satisfy: "any",
  "allowlist-source-range": "127.0.0.1/32,::1",
})}${ingress("global", "/global", {})}${ingress("public", "/public", { "enable-global-auth": "false" })}${ingress("global", "/global", {})}${ingress("public", "/public", { "enable-global-auth": "false" })}${ingress("slow", "/slow", {})}${policy("slow", { url: `${auth}/slow`, timeoutMs: 300 })}${ingress("cached", "/cached", {})}${policy("cached", { url: `${auth}/check`, responseHeaders: ["X-Auth-Request-User"], cache: { key: "$cookie_session", durations: "200 1m" } })}`;
}

forEachFront("forward authentication", (front) => {
  let dir: string | undefined;
  let echo: EchoServer | undefined;
  let auth: ForwardAuthService;
  let gw: RunningGateway | undefined;
  let base = "";

  beforeAll(async () => {
    echo = startEchoServer({ service: "web" });
    auth = startForwardAuthService();
    dir = await mkdtemp(join(tmpdir(), "gatehouse-forward-auth-"));
    await writeFile(join(dir, "all.yaml"), manifests(echo.port, auth.url, await freePort()));
    const t = await startTestGateway(
      ["--dir", dir],
      ["--front", front, "--log-level", "error", "--access-log-sample", "0"].concat([
        "--global-auth-url",
        `${auth.url}/check`,
        "--global-auth-signin",
        `${auth.url}/login`,
      ]),
    );
    gw = t.gw;
    base = `http://127.0.0.1:${t.port}`;
  });

  afterAll(async () => {
    await gw?.stop();
    setLogLevel((process.env.GATEHOUSE_LOG_LEVEL as LogLevel | undefined) ?? "info");
    await echo?.stop();
    await auth?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(base + path, { headers: { host: HOST, ...headers }, redirect: "manual" });
  const echoed = async (res: Response) =>
    (await res.json()) as { path: string; headers: Record<string, string[]> };

  describe("a browser's session", () => {
    let cookie = "";

    test("no session: a 302 to the sign-in page, rd naming the page asked for, nothing upstream", async () => {
      const before = echo?.requests;
      const res = await get("/app/page?x=1&y=a b");
      expect(res.status).toBe(302);
      const port = new URL(base).port;
      expect(res.headers.get("location")).toBe(
        `${auth.url}/login?rd=http://${HOST}:${port}${encodeURIComponent("/app/page?x=1&y=a%20b")}`,
      );
      expect(echo?.requests).toBe(before);
      const check = auth.seen.at(-1);
      expect(check?.path).toBe("/check");
      expect(check?.headers["x-original-url"]).toBe(`http://${HOST}:${port}/app/page?x=1&y=a%20b`);
      expect(check?.headers["x-original-method"]).toBe("GET");
      expect(check?.headers["x-forwarded-for"]).toBe("127.0.0.1");
      expect(check?.headers["content-length"]).toBeUndefined();
      expect([check?.headers["x-forwarded-host"], check?.headers["x-forwarded-uri"]]).toEqual([
        `${HOST}:${port}`,
        "/app/page?x=1&y=a%20b",
      ]);
    });

    test("signing in sets the cookie; then the backend is served with the service's identity, not the client's", async () => {
      const login = await fetch(`${auth.url}/login?rd=${encodeURIComponent(`${base}/app/`)}`, {
        redirect: "manual",
      });
      cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      expect(cookie).toStartWith("session=");
      const res = await get("/app/page", {
        cookie,
        "x-auth-request-user": "mallory",
        "x-forwarded-for": "6.6.6.6",
        "x-forwarded-host": "admin.internal",
        forwarded: "host=admin.internal",
      });
      expect(res.status).toBe(200);
      const seen = await echoed(res);
      expect(seen.headers["X-Auth-Request-User"]).toEqual(["alice"]);
      expect(seen.headers["X-Auth-Request-Email"]).toEqual(["alice@example.com"]);
      // The service was told the client's address and the host routed, never what the client wrote.
      const check = auth.seen.at(-1);
      expect(check?.headers["x-forwarded-for"]).toBe("127.0.0.1");
      expect(check?.headers["x-forwarded-host"]).toBe(`${HOST}:${new URL(base).port}`);
      expect(check?.headers.forwarded).toBeUndefined();
    });

    test("a request body waits for the service's answer and then reaches the backend whole", async () => {
      const login = await fetch(`${auth.url}/login`, { redirect: "manual" });
      const fresh = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      const body = "x".repeat(200_000);
      const res = await fetch(`${base}/app/upload`, {
        method: "POST",
        headers: { host: HOST, cookie: fresh },
        body,
        redirect: "manual",
      });
      expect(res.status).toBe(200);
      const seen = await echoed(res);
      expect(seen.headers["Content-Length"]).toEqual(["200000"]);
      // The service got a GET (as nginx's auth_request sends), the method named, no body.
      const check = auth.seen.at(-1);
      expect([
        check?.method,
        check?.headers["x-original-method"],
        check?.headers["content-length"] ?? "0",
      ]).toEqual(["GET", "POST", "0"]);
    });

    test("signed out, and with an expired session: sent to sign in again", async () => {
      await fetch(`${auth.url}/logout`, { headers: { cookie } });
      expect((await get("/app/page", { cookie })).status).toBe(302);
      const login = await fetch(`${auth.url}/login`, { redirect: "manual" });
      const fresh = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      expect((await get("/app/page", { cookie: fresh })).status).toBe(200);
      auth.expireAll();
      expect((await get("/app/page", { cookie: fresh })).status).toBe(302);
    });

    test("without auth-signin a 401 is passed on with the service's challenge", async () => {
      const res = await get("/plain401/x");
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Cookie realm="test"');
    });
  });

  test("auth-method, auth-request-redirect and auth-signin-redirect-param: what the service and the browser get", async () => {
    const res = await get("/method/p?q=1");
    expect(res.status).toBe(302);
    const port = new URL(base).port;
    expect(res.headers.get("location")).toBe(
      `${auth.url}/login?app=1&return_to=http://${HOST}:${port}${encodeURIComponent("/method/p?q=1")}`,
    );
    const check = auth.seen.at(-1);
    expect([check?.method, check?.headers["x-original-method"], check?.headers["x-original-uri"]]).toEqual([
      "POST",
      "GET",
      "/method/p?q=1",
    ]);
    expect([check?.headers["x-scheme"], check?.headers["x-auth-request-redirect"]]).toEqual([
      "http",
      `https://${HOST}/back`,
    ]);
  });

  test("kept answers (auth-cache-key, and spec.externalAuth.cache): one check for many requests with the same cookie", async () => {
    const login = await fetch(`${auth.url}/login`, { redirect: "manual" });
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const checks = () => auth.seen.filter((s) => s.path === "/check").length;
    for (const path of ["/cached/x", "/kept/x"]) {
      const before = checks();
      for (let i = 0; i < 5; i++) {
        const res = await get(path, { cookie });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
      expect(checks() - before).toBe(1);
    }
    // A different cookie is a different key: checked, refused, and not mistaken for the kept one.
    expect((await get("/kept/x", { cookie: "session=forged" })).status).toBe(401);
  });

  test("satisfy any: the allow list lets the client in without the service, and it cannot forge the service's headers", async () => {
    const before = auth.seen.length;
    const res = await get("/office/x", { "x-auth-request-user": "admin" });
    expect(res.status).toBe(200);
    expect((await echoed(res)).headers["X-Auth-Request-User"]).toBeUndefined();
    expect(auth.seen.length).toBe(before);
  });

  test('--global-auth-url guards an Ingress without auth-url; enable-global-auth "false" opts out', async () => {
    const guarded = await get("/global/x");
    expect(guarded.status).toBe(302);
    expect(guarded.headers.get("location")).toStartWith(`${auth.url}/login?rd=`);
    const open = await get("/public/x");
    expect(open.status).toBe(200);
    await open.arrayBuffer();
  });

  test("the failure matrix: refusals pass, everything else is 503, the backend sees nothing", async () => {
    const before = echo?.requests;
    const started = performance.now();
    const statuses: Record<string, number> = {};
    for (const path of ["/slow/x", "/redirect/x", "/huge/x", "/gone/x", "/forbidden/x"]) {
      const res = await get(path);
      statuses[path] = res.status;
      if (path === "/forbidden/x") expect(res.headers.get("set-cookie")).toBe("seen=1; Path=/");
      await res.arrayBuffer();
    }
    expect(statuses).toEqual({
      "/slow/x": 503,
      "/redirect/x": 503,
      "/huge/x": 503,
      "/gone/x": 503,
      "/forbidden/x": 403,
    });
    // The slow service was given up on at its 300 ms, not waited for (2 s).
    expect(performance.now() - started).toBeLessThan(1800);
    expect(echo?.requests).toBe(before);
  });
});
