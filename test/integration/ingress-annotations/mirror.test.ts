/**
 * The mirror annotations live on both fronts (the case table cannot name a second server): a recording
 * HTTP server stands for the mirror and keeps what each copy brought (path from `$request_uri`, Host from
 * `mirror-host`, body with `mirror-request-body` on, none with off); the main answer comes from the
 * scripted backend whatever the mirror does (down, slow), and a body bigger than --request-buffer-bytes
 * is not copied but counted.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { annotatedIngressYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { wireExchange } from "../../helpers/raw-http.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { type SeenRequest, startScriptedBackend } from "./harness.ts";

/** --request-buffer-bytes of the gateways here: bodies up to this are read whole, and mirrored. */
const BUFFER = 1024;

interface Copy {
  readonly method: string;
  readonly path: string;
  readonly host: string | null;
  readonly length: string | null;
  readonly body: string;
}

function ingress(name: string, annotations: Record<string, string>): string {
  return annotatedIngressYaml({
    name,
    namespace: "live",
    host: `${name}.mirror.test`,
    service: "app",
    annotations,
  });
}

function service(port: number): string {
  return `apiVersion: v1
kind: Service
metadata: { name: app, namespace: live }
spec: { ports: [{ port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: app-1, namespace: live, labels: { kubernetes.io/service-name: app } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ port: ${port} }]
`;
}

forEachFront("mirror annotations, live", (front) => {
  let backend: ReturnType<typeof startScriptedBackend>;
  let mirror: ReturnType<typeof Bun.serve>;
  const copies: Copy[] = [];
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    backend = startScriptedBackend();
    // The mirror: records each copy; under /slow it answers after 3 s.
    mirror = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        const url = new URL(req.url);
        const body = await req.text();
        const length = req.headers.get("content-length");
        copies.push({
          method: req.method,
          path: url.pathname + url.search,
          host: req.headers.get("host"),
          length,
          body,
        });
        if (url.pathname.startsWith("/slow")) await Bun.sleep(3000);
        return new Response("mirror answer, dropped", { status: 503 });
      },
    });
    const down = await freePort();
    const at = `http://127.0.0.1:${mirror.port}`;
    dir = await mkdtemp(join(tmpdir(), "gatehouse-mirror-"));
    const docs = [
      ingress("copy", { "mirror-target": `${at}/m$request_uri`, "mirror-host": "test.env.com" }),
      ingress("nobody", { "mirror-target": `${at}/off$request_uri`, "mirror-request-body": "off" }),
      ingress("plain", { "mirror-target": at }),
      ingress("down", { "mirror-target": `http://127.0.0.1:${down}$request_uri` }),
      ingress("slow", { "mirror-target": `${at}/slow$request_uri` }),
      service(backend.port),
    ];
    await writeFile(join(dir, "live.yaml"), docs.join("---\n"));
    ({ gw, port } = await startTestGateway(
      ["--dir", dir],
      ["--front", front, "--request-buffer-bytes", String(BUFFER), "--access-log-sample", "0"],
    ));
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    backend?.stop();
    mirror?.stop(true);
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  const send = async (name: string, path: string, init: RequestInit = {}) => {
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      ...init,
      headers: { host: `${name}.mirror.test`, ...init.headers },
    });
    const text = await res.text();
    const seen =
      res.headers.get("content-type") === "application/json" ? (JSON.parse(text) as SeenRequest) : undefined;
    return { status: res.status, seen, ms: performance.now() - t0 };
  };

  /** The copies whose path starts with `prefix`, once `n` have arrived (or after 2 s). */
  const copiesAt = async (prefix: string, n = 1) => {
    const deadline = performance.now() + 2000;
    const mine = () => copies.filter((c) => c.path.startsWith(prefix));
    while (mine().length < n && performance.now() < deadline) await Bun.sleep(10);
    return mine();
  };

  test("mirror-target with $request_uri and mirror-host: the copy has the path, the Host and the body", async () => {
    const res = await send("copy", `/p/${front}?q=1`, { method: "POST", body: "hello mirror" });
    expect(res.status).toBe(200);
    expect(res.seen?.path).toBe(`/p/${front}?q=1`);
    expect(await copiesAt(`/m/p/${front}`)).toEqual([
      { method: "POST", path: `/m/p/${front}?q=1`, host: "test.env.com", length: "12", body: "hello mirror" },
    ]);
  });

  test('mirror-request-body "off": the copy has no body', async () => {
    const res = await send("nobody", `/n/${front}`, { method: "POST", body: "not for the mirror" });
    expect(res.status).toBe(200);
    const [copy] = await copiesAt(`/off/n/${front}`);
    expect(copy).toMatchObject({ method: "POST", body: "" });
    expect(copy?.length ?? "0").toBe("0");
  });

  test("a target without a path keeps the request's path; the Host is the target's host name", async () => {
    expect((await send("plain", `/plain/${front}?a=b`)).status).toBe(200);
    expect(await copiesAt(`/plain/${front}`)).toEqual([
      { method: "GET", path: `/plain/${front}?a=b`, host: "127.0.0.1", length: null, body: "" },
    ]);
  });

  test("a body over --request-buffer-bytes is forwarded whole, not mirrored, and counted", async () => {
    const big = "z".repeat(BUFFER * 4);
    const res = await send("copy", `/big/${front}`, { method: "POST", body: big });
    expect(res.status).toBe(200);
    expect(res.seen?.headers["content-length"]).toBe(String(big.length));
    await Bun.sleep(100);
    expect(copies.some((c) => c.path.startsWith(`/m/big/${front}`))).toBe(false);
    const metrics = await gw.metrics.text();
    expect(metrics).toMatch(
      new RegExp(
        `gatehouse_mirror_requests_total\\{mirror="http://127\\.0\\.0\\.1:${mirror.port}",outcome="skipped_streamed_body"\\} [1-9]`,
      ),
    );
  });

  test("framing decides alike on both fronts: a small chunked body is streamed (not mirrored), a small body after Expect: 100-continue is read whole (mirrored)", async () => {
    const host = "copy.mirror.test";
    const chunked = await wireExchange(
      port,
      `POST /chunked/${front} HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
    );
    expect(chunked.status).toBe(200);
    const expecting = await wireExchange(
      port,
      `POST /expect/${front} HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 3\r\nExpect: 100-continue\r\nConnection: close\r\n\r\nxyz`,
    );
    // The interim 100 Continue comes first on both fronts (parseResponse reads the first head only).
    expect(expecting.status).toBe(100);
    expect(await copiesAt(`/m/expect/${front}`)).toMatchObject([{ body: "xyz" }]);
    expect(copies.some((c) => c.path.startsWith(`/m/chunked/${front}`))).toBe(false);
  });

  test("a mirror that is down or slow never changes or delays the answer", async () => {
    const down = await send("down", `/d/${front}`, { method: "POST", body: "x" });
    expect(down.status).toBe(200);
    expect(down.seen?.path).toBe(`/d/${front}`);
    const slow = await send("slow", `/s/${front}`, { method: "POST", body: "y" });
    expect(slow.status).toBe(200);
    expect(slow.ms).toBeLessThan(1500);
    expect(await copiesAt(`/slow/s/${front}`)).toHaveLength(1);
    // The next request on the route is not held up by the copy still waiting either.
    expect((await send("slow", `/s2/${front}`)).ms).toBeLessThan(1500);
    const metrics = await gw.metrics.text();
    expect(metrics).toMatch(
      /gatehouse_mirror_requests_total\{mirror="http:\/\/127\.0\.0\.1:\d+",outcome="failed"\} [1-9]/,
    );
  });
});
