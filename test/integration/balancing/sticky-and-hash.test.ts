/**
 * Load balancing and session affinity live on both fronts, from a folder of Ingresses (the annotations go
 * through translation as a user writes them): Service `web` has two endpoints (two echo pods), Service
 * `admin` one. `affinity: cookie` hands out a cookie naming the endpoint and keeps every request carrying
 * it there; a forged cookie naming `admin`'s endpoint never reaches it (it is looked up only among the
 * route's endpoints), is treated as absent and replaced; `upstream-hash-by: $http_x_user` sends a key to
 * one endpoint every time (with `upstream-hash-by-subset`, one subset), and a 60 KB key is hashed whole;
 * `load-balance: ewma` still serves from both; the `session-cookie-*` attributes reach the Set-Cookie, and
 * `session-cookie-change-on-failure` moves a client off an endpoint that refuses connections.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { endpointToken } from "../../../src/proxy/balancing/session-token.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { annotatedIngressYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

function ingress(name: string, annotations: Record<string, string>, service: string): string {
  return annotatedIngressYaml({ name, namespace: "lb", host: `${name}.lb.test`, service, annotations });
}

/** A Service with one EndpointSlice per echo server (127.0.0.1 at each one's port). */
function service(name: string, echoes: { port: number }[]): string {
  const slices = echoes.map(
    (e, i) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-${i}, namespace: lb, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ port: ${e.port} }]
`,
  );
  const svc = `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: lb }
spec: { ports: [{ port: 80 }] }
`;
  return [svc, ...slices].join("---\n");
}

/**
 * A backend that takes a request head of any size (Bun.serve, as the echo server, refuses one over 16 KB)
 * and answers `{"pod": name}`: the long hash keys reach it.
 */
function startRawBackend(name: string) {
  const body = JSON.stringify({ pod: name });
  const answer = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  return Bun.listen<{ head: string }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        s.data = { head: "" };
      },
      data(s, chunk) {
        s.data.head += chunk.toString("latin1");
        while (s.data.head.includes("\r\n\r\n")) {
          s.data.head = s.data.head.slice(s.data.head.indexOf("\r\n\r\n") + 4);
          s.write(answer);
        }
      },
    },
  });
}

forEachFront("balancing and affinity, live", (front) => {
  let a: EchoServer;
  let b: EchoServer;
  let admin: EchoServer;
  let rawA: ReturnType<typeof startRawBackend>;
  let rawB: ReturnType<typeof startRawBackend>;
  let dir: string;
  /** A port nothing listens on: an endpoint that refuses connections. */
  let closed: number;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    a = startEchoServer({ pod: "web-a" });
    b = startEchoServer({ pod: "web-b" });
    admin = startEchoServer({ pod: "admin" });
    rawA = startRawBackend("web-a");
    rawB = startRawBackend("web-b");
    closed = await freePort();
    dir = await mkdtemp(join(tmpdir(), "gatehouse-balancing-"));
    const docs = [
      ingress(
        "sticky",
        { affinity: "cookie", "session-cookie-name": "GH", "session-cookie-max-age": "60" },
        "web",
      ),
      ingress("hashed", { "upstream-hash-by": "$http_x_user" }, "raw"),
      ingress(
        "subset",
        {
          "upstream-hash-by": "$http_x_user",
          "upstream-hash-by-subset": "true",
          "upstream-hash-by-subset-size": "2",
        },
        "raw",
      ),
      ingress("ewma", { "load-balance": "ewma" }, "web"),
      ingress(
        "attrs",
        {
          affinity: "cookie",
          "affinity-mode": "persistent",
          "session-cookie-name": "GH2",
          "session-cookie-path": "/p",
          "session-cookie-domain": "lb.test",
          "session-cookie-expires": "120",
          "session-cookie-samesite": "None",
          "session-cookie-conditional-samesite-none": "true",
          "session-cookie-secure": "true",
        },
        "web",
      ),
      ingress(
        "failover",
        { affinity: "cookie", "session-cookie-change-on-failure": "true", "proxy-next-upstream-tries": "2" },
        "half",
      ),
      ingress("admin", {}, "admin"),
      service("web", [a, b]),
      service("admin", [admin]),
      service("raw", [rawA, rawB]),
      service("half", [{ port: closed }, a]),
    ];
    await writeFile(join(dir, "lb.yaml"), docs.join("---\n"));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front, "--access-log-sample", "0"]));
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    await Promise.all([a?.stop(), b?.stop(), admin?.stop()]);
    rawA?.stop(true);
    rawB?.stop(true);
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  async function get(host: string, headers: Record<string, string> = {}) {
    const res = await fetch(`http://127.0.0.1:${port}/p`, {
      headers: { host: `${host}.lb.test`, ...headers },
    });
    const text = await res.text();
    const pod = res.status === 200 ? (JSON.parse(text) as { pod: string }).pod : "";
    return { status: res.status, pod, setCookie: res.headers.get("set-cookie"), text };
  }

  test("affinity: the first answer sets a cookie naming its endpoint; with it every request goes there", async () => {
    const first = await get("sticky");
    expect(first.status).toBe(200);
    const pinned = first.pod === "web-a" ? a : b;
    expect(first.setCookie).toBe(
      `GH=${endpointToken(`http://127.0.0.1:${pinned.port}`)}; Path=/; Max-Age=60; HttpOnly`,
    );
    const cookie = (first.setCookie as string).split(";")[0] as string;
    for (let i = 0; i < 10; i++) {
      const again = await get("sticky", { cookie: `x=1; ${cookie}` });
      expect(again.pod).toBe(first.pod);
      expect(again.setCookie).toBeNull();
    }
    // Without the cookie, round robin reaches both.
    const pods = new Set<string>();
    for (let i = 0; i < 4; i++) pods.add((await get("sticky")).pod);
    expect(pods).toEqual(new Set(["web-a", "web-b"]));
  });

  test("a forged cookie naming another backend's endpoint never reaches it: treated as absent, replaced", async () => {
    const forged = endpointToken(`http://127.0.0.1:${admin.port}`);
    for (const value of [forged, "not-a-token", `${"f".repeat(16)}`]) {
      const res = await get("sticky", { cookie: `GH=${value}` });
      expect(["web-a", "web-b"]).toContain(res.pod);
      const own = res.pod === "web-a" ? a : b;
      expect(res.setCookie).toStartWith(`GH=${endpointToken(`http://127.0.0.1:${own.port}`)};`);
    }
    expect(admin.requests).toBe(0);
  });

  test("the session-cookie-* attributes; SameSite=None left out for a client known to reject it", async () => {
    const modern = "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36";
    const res = await get("attrs", { "user-agent": modern });
    const own = res.pod === "web-a" ? a : b;
    const expires = /; Expires=([^;]+);/.exec(res.setCookie ?? "")?.[1] ?? "";
    expect(Math.abs(Date.parse(expires) - (Date.now() + 120_000))).toBeLessThan(5000);
    expect(res.setCookie).toBe(
      `GH2=${endpointToken(`http://127.0.0.1:${own.port}`)}; Path=/p; Domain=lb.test; Expires=${expires}; Secure; HttpOnly; SameSite=None`,
    );
    const old = await get("attrs", {
      "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/59.0.3071 Safari/537.36",
    });
    expect(old.setCookie).toContain("; Secure; HttpOnly");
    expect(old.setCookie).not.toContain("SameSite");
  });

  test("session-cookie-change-on-failure: a pinned endpoint that refuses moves the client, with a new cookie", async () => {
    const res = await get("failover", {
      cookie: `INGRESSCOOKIE=${endpointToken(`http://127.0.0.1:${closed}`)}`,
    });
    expect(res.status).toBe(200);
    expect(res.pod).toBe("web-a");
    expect(res.setCookie).toStartWith(
      `INGRESSCOOKIE=${endpointToken(`http://127.0.0.1:${a.port}`)}; Path=/;`,
    );
  });

  test("upstream-hash-by: the same key always reaches the same endpoint; keys spread over both", async () => {
    const pods = new Set<string>();
    for (let u = 0; u < 12; u++) {
      const first = (await get("hashed", { "x-user": `user-${u}` })).pod;
      for (let i = 0; i < 3; i++) expect((await get("hashed", { "x-user": `user-${u}` })).pod).toBe(first);
      pods.add(first);
    }
    expect(pods).toEqual(new Set(["web-a", "web-b"]));
  });

  test("a long hash key is hashed whole and sticks; past the head limit the front answers 431", async () => {
    // Both fronts take request heads up to 64 KiB (--max-request-header-bytes; docs/http.md).
    const big = "k".repeat(60 * 1024);
    const first = await get("hashed", { "x-user": big });
    expect(first.status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await get("hashed", { "x-user": big })).pod).toBe(first.pod);
    const pods = new Set<string>();
    for (const c of "abcdefgh") pods.add((await get("hashed", { "x-user": `${big}${c}` })).pod);
    // Keys differing only in their last byte still spread: the whole key is hashed, not a prefix.
    expect(pods).toEqual(new Set(["web-a", "web-b"]));
    expect((await get("hashed", { "x-user": "k".repeat(64 * 1024) })).status).toBe(431);
    expect((await get("hashed", { "x-user": "after" })).status).toBe(200);
  });

  test("upstream-hash-by-subset: a key picks a subset (here both endpoints), then one of it at random", async () => {
    const pods = new Set<string>();
    for (let i = 0; i < 30 && pods.size < 2; i++)
      pods.add((await get("subset", { "x-user": "one-key" })).pod);
    expect(pods).toEqual(new Set(["web-a", "web-b"]));
  });

  test("load-balance ewma: both endpoints serve", async () => {
    const pods = new Set<string>();
    for (let i = 0; i < 40 && pods.size < 2; i++) pods.add((await get("ewma")).pod);
    expect(pods).toEqual(new Set(["web-a", "web-b"]));
  });
});
