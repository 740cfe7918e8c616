/**
 * Custom error pages (model/error-pages.ts; ingress-nginx `custom-http-errors` with `default-backend`),
 * on both fronts: a gateway's 503 (no endpoints) and a backend's 404 are replaced by the error backend's
 * answer, asked with the X- fields; a code not listed, a route without pages, and (with `upstream` off) a
 * backend's error pass unchanged; an error backend that cannot answer leaves the gateway's own error.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import {
  backend,
  forwardTo,
  listener,
  match,
  model,
  route,
  vhost,
} from "../../../src/proxy/testing/model.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";

const pages = (backendId: string, upstream = true) => ({
  errorPages: {
    codes: [404, 503],
    backendId,
    upstream,
    namespace: "shop",
    ingressName: "web",
    serviceName: "public",
    servicePort: "80",
  },
});

forEachFront("custom error pages", (front) => {
  let pub: ReturnType<typeof Bun.serve>;
  let errors: ReturnType<typeof Bun.serve>;
  let gw: GatewayServer;
  let base = "";
  let restoreSink: ReturnType<typeof setLogSink> | undefined;
  const asked: { method: string; path: string; headers: Record<string, string> }[] = [];

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    // A backend answering `/…/status/<n>` with n, as JSON naming itself.
    pub = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        const path = new URL(req.url).pathname;
        const status = Number(/\/status\/(\d{3})/.exec(path)?.[1] ?? 200);
        return Response.json({ upstream: "public", path }, { status });
      },
    });
    // An error backend as ingress-nginx's example: the status it is told in X-Code, its own body.
    errors = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        const headers = Object.fromEntries(req.headers);
        asked.push({ method: req.method, path: new URL(req.url).pathname, headers });
        return Response.json(
          { page: "custom", code: headers["x-code"] },
          { status: Number(headers["x-code"]) },
        );
      },
    });
    const dead = await freePort();
    gw = new GatewayServer({ bind: "127.0.0.1", front });
    await gw.apply(
      model(
        [
          listener([
            vhost("app.example", [
              route("paged", match("/paged"), forwardTo("public"), pages("errors")),
              route("empty", match("/empty"), forwardTo("empty"), pages("errors")),
              route("own-only", match("/own-only"), forwardTo("public"), pages("errors", false)),
              route("broken", match("/broken"), forwardTo("public"), pages("dead")),
              route("broken-empty", match("/broken-empty"), forwardTo("empty"), pages("dead")),
              route("plain", match("/"), forwardTo("public")),
            ]),
          ]),
        ],
        [
          backend("public", [pub.port ?? 0]),
          backend("empty", []),
          backend("errors", [errors.port ?? 0]),
          backend("dead", [dead]),
        ],
      ),
    );
    base = `http://127.0.0.1:${gw.ports()[0]?.port ?? 0}`;
  });

  afterAll(async () => {
    await gw.stop(true);
    pub.stop(true);
    errors.stop(true);
    if (restoreSink) setLogSink(restoreSink);
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { headers: { host: "app.example", ...headers } });

  test("a backend's 404 is the error backend's answer, asked with the X- fields", async () => {
    const before = asked.length;
    const res = await get("/paged/status/404?q=1", { accept: "application/json", "x-request-id": "abc123" });
    expect([res.status, await res.json()]).toEqual([404, { page: "custom", code: "404" }]);
    expect(asked.length).toBe(before + 1);
    const got = asked[before];
    expect([got?.method, got?.path]).toEqual(["GET", "/"]);
    const h = got?.headers ?? {};
    expect([h.host, h["x-code"], h["x-format"], h["x-original-uri"], h["x-request-id"]]).toEqual([
      "app.example",
      "404",
      "application/json",
      "/paged/status/404?q=1",
      "abc123",
    ]);
    expect([h["x-namespace"], h["x-ingress-name"], h["x-service-name"], h["x-service-port"]]).toEqual([
      "shop",
      "web",
      "public",
      "80",
    ]);
  });

  test("the gateway's 503 for a backend without endpoints is the error backend's answer", async () => {
    const res = await get("/empty/x");
    expect([res.status, await res.json()]).toEqual([503, { page: "custom", code: "503" }]);
    expect(asked.at(-1)?.headers["x-code"]).toBe("503");
    // A HEAD asks with HEAD, as nginx keeps the method.
    const head = await fetch(`${base}/empty/x`, { method: "HEAD", headers: { host: "app.example" } });
    expect([head.status, asked.at(-1)?.method]).toEqual([503, "HEAD"]);
  });

  test("a code not listed, a route without pages, and backend errors with upstream off pass unchanged", async () => {
    const before = asked.length;
    const other = await get("/paged/status/500");
    expect([other.status, ((await other.json()) as { upstream: string }).upstream]).toEqual([500, "public"]);
    const plain = await get("/plain/status/404");
    expect([plain.status, ((await plain.json()) as { upstream: string }).upstream]).toEqual([404, "public"]);
    const own = await get("/own-only/status/404");
    expect([own.status, ((await own.json()) as { upstream: string }).upstream]).toEqual([404, "public"]);
    const ok = await get("/paged/fine");
    expect([ok.status, ((await ok.json()) as { path: string }).path]).toEqual([200, "/paged/fine"]);
    expect(asked.length).toBe(before);
  });

  test("an error backend that cannot answer leaves the gateway's own error", async () => {
    const upstream404 = await get("/broken/status/404");
    expect([upstream404.status, await upstream404.text()]).toEqual([404, "Not Found\n"]);
    const none = await get("/broken-empty/x");
    expect([none.status, await none.text()]).toEqual([503, "Service Unavailable\n"]);
  });
});
