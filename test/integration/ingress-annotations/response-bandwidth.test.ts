/**
 * `limit-rate` and `limit-rate-after` (ingress-nginx's response bandwidth: N KiB a second after the first M
 * KiB), live on both fronts with bodies large enough to time: the first M KiB come at once, the rest at the
 * rate, so a body of B KiB takes about (B − M) / N seconds; without the annotations it takes milliseconds.
 * Each framing the raw front relays is paced (Content-Length, chunked, close-delimited), so are the requests
 * it relays to the full request path (a route with error pages), and the upstream is held back meanwhile, not read
 * ahead into memory. Written exception (docs/http.md): on the full request path (`--front bun`, and the
 * raw front's relayed requests) a paced body always goes out chunked, its Content-Length dropped, a small
 * one too (Bun.serve strips a handler's Content-Length from a stream body; paced-stream.ts). A client
 * connection outlives a paced response, even one whose upstream closed while its tail was held back.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket } from "bun";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { annotatedIngressYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { sequentialExchanges } from "../../helpers/raw-http.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const KIB = 1024;

interface Pending {
  rest: Buffer | undefined;
  end: boolean;
  /** Reset the connection (RST) a moment after the whole response was taken. */
  reset: boolean;
  /** The whole body was taken by the kernel (the gateway read it or its socket buffers hold it). */
  done: boolean;
}

/**
 * Bodies of `i mod 251` bytes by path: `/length/<n>`, `/chunked/<n>` (16 KiB chunks), `/close/<n>`, and
 * `/ended/<n>` (Content-Length and `Connection: close`, then a reset 50 ms after the gateway took it all).
 */
function startBodyBackend() {
  const written = new Map<string, Pending>();
  const flush = (s: Socket<Pending>) => {
    const p = s.data;
    if (p.rest === undefined) return;
    const n = s.write(p.rest);
    p.rest = n < 0 || n === p.rest.length ? undefined : p.rest.subarray(n);
    if (p.rest === undefined) {
      p.done = true;
      if (p.end) s.end();
      if (p.reset) setTimeout(() => s.terminate(), 50);
    }
  };
  const server = Bun.listen<Pending>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        s.data = { rest: undefined, end: false, reset: false, done: false };
      },
      data(s, chunk) {
        const [, kind = "", size = "0", tag = ""] =
          /^[A-Z]+ \/(\w+)\/(\d+)(?:\/(\w+))? /.exec(chunk.toString("latin1")) ?? [];
        const body = Buffer.alloc(Number(size));
        for (let i = 0; i < body.length; i++) body[i] = i % 251;
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n";
        let payload = body;
        if (kind === "length") head += `Content-Length: ${body.length}\r\n\r\n`;
        else if (kind === "ended") head += `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
        else if (kind === "chunked") {
          head += "Transfer-Encoding: chunked\r\n\r\n";
          const parts: Buffer[] = [];
          for (let at = 0; at < body.length; at += 16 * KIB) {
            const piece = body.subarray(at, at + 16 * KIB);
            parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n"));
          }
          payload = Buffer.concat([...parts, Buffer.from("0\r\n\r\n")]);
        } else head += "Connection: close\r\n\r\n";
        s.data.end = kind === "close";
        s.data.reset = kind === "ended";
        s.data.rest = Buffer.concat([Buffer.from(head, "latin1"), payload]);
        if (tag !== "") written.set(tag, s.data);
        flush(s);
      },
      drain: flush,
    },
  });
  return { port: server.port, written, stop: () => server.stop(true) };
}

function ingress(name: string, annotations: Record<string, string>): string {
  return annotatedIngressYaml({
    name,
    namespace: "bw",
    host: `${name}.bw.test`,
    service: "bodies",
    annotations,
  });
}

function manifests(backendPort: number): string {
  return [
    ingress("paced", { "limit-rate": "64", "limit-rate-after": "32" }),
    ingress("fast", {}),
    ingress("quick", { "limit-rate": "256", "limit-rate-after": "64" }),
    // Error pages are not on the raw front's fast path: its requests are relayed to the full request path.
    ingress("relayed", {
      "limit-rate": "256",
      "limit-rate-after": "64",
      "custom-http-errors": "599",
      "default-backend": "bodies",
    }),
    ingress("slow", { "limit-rate": "1024" }),
    ingress("zero", { "limit-rate": "0", "limit-rate-after": "1" }),
    `apiVersion: v1
kind: Service
metadata: { name: bodies, namespace: bw }
spec: { ports: [{ port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: bodies-1, namespace: bw, labels: { kubernetes.io/service-name: bodies } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ port: ${backendPort} }]
`,
  ].join("---\n");
}

/** A keep-alive GET of `path` on `<host>.bw.test` (Connection: close when `last`). */
function getBytes(host: string, path: string, last = false): string {
  return `GET ${path} HTTP/1.1\r\nHost: ${host}.bw.test\r\n${last ? "Connection: close\r\n" : ""}\r\n`;
}

function expectBody(bytes: Uint8Array, size: number): void {
  expect(bytes.length).toBe(size);
  let wrong = -1;
  for (let i = 0; i < bytes.length && wrong < 0; i++) if (bytes[i] !== i % 251) wrong = i;
  expect(wrong).toBe(-1);
}

forEachFront("limit-rate and limit-rate-after, live", (front) => {
  let backend: ReturnType<typeof startBodyBackend>;
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    backend = startBodyBackend();
    dir = await mkdtemp(join(tmpdir(), "gatehouse-bandwidth-"));
    await writeFile(join(dir, "bw.yaml"), manifests(backend.port));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front]));
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    backend?.stop();
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  const get = async (host: string, path: string, init: RequestInit = {}) => {
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      ...init,
      headers: { host: `${host}.bw.test` },
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    return { res, bytes, ms: performance.now() - t0 };
  };

  test(`limit-rate 64 after 32: 128 KiB take about (128 − 32) / 64 = 1.5 s${front === "bun" ? ", sent chunked (written exception)" : ", Content-Length kept"}`, async () => {
    const { res, bytes, ms } = await get("paced", `/length/${128 * KIB}`);
    expect(res.status).toBe(200);
    expectBody(bytes, 128 * KIB);
    expect(ms).toBeGreaterThan(1350);
    // Generous for a loaded 2-core machine; a lost pace would be milliseconds, a stuck one never ends.
    expect(ms).toBeLessThan(4500);
    if (front === "raw") expect(res.headers.get("content-length")).toBe(String(128 * KIB));
    else {
      expect(res.headers.get("transfer-encoding")).toBe("chunked");
      expect(res.headers.get("content-length")).toBeNull();
    }
  });

  test("without the annotations the same body comes at once", async () => {
    const { res, bytes, ms } = await get("fast", `/length/${128 * KIB}`);
    expect(res.status).toBe(200);
    expectBody(bytes, 128 * KIB);
    expect(ms).toBeLessThan(700);
  });

  test('limit-rate "0" is no limit, whatever limit-rate-after says', async () => {
    const { bytes, ms } = await get("zero", `/length/${128 * KIB}`);
    expectBody(bytes, 128 * KIB);
    expect(ms).toBeLessThan(700);
  });

  test("a chunked body is paced too: 256 KiB at 256 KiB/s after 64 KiB, about 0.75 s", async () => {
    const { res, bytes, ms } = await get("quick", `/chunked/${256 * KIB}`);
    expect(res.status).toBe(200);
    expectBody(bytes, 256 * KIB);
    expect(ms).toBeGreaterThan(650);
    expect(ms).toBeLessThan(3500);
  });

  test("a close-delimited body is paced and complete", async () => {
    const { res, bytes, ms } = await get("quick", `/close/${256 * KIB}`);
    expect(res.status).toBe(200);
    expectBody(bytes, 256 * KIB);
    expect(ms).toBeGreaterThan(650);
    expect(ms).toBeLessThan(3500);
  });

  test("a request the raw front relays to the full request path is paced once (and sent chunked: written exception)", async () => {
    const { res, bytes, ms } = await get("relayed", `/length/${256 * KIB}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("transfer-encoding")).toBe("chunked");
    expectBody(bytes, 256 * KIB);
    expect(ms).toBeGreaterThan(650);
    expect(ms).toBeLessThan(3500);
  });

  test("the same client connection serves the next request once a paced response is over", async () => {
    const got = await sequentialExchanges(port, [
      getBytes("quick", `/length/${72 * KIB}`),
      getBytes("fast", `/length/${KIB}`, true),
    ]);
    expect(got.map((r) => r.status)).toEqual([200, 200]);
    expectBody(got[0]?.body ?? new Uint8Array(), 72 * KIB);
    expectBody(got[1]?.body ?? new Uint8Array(), KIB);
  });

  test("an upstream closing after its whole body, while the pace still holds its tail, leaves the client connection reusable", async () => {
    // 48 KiB at 64 KiB/s after 32: the upstream has sent all and reset ~200 ms before the tail may go. A
    // reset, as a FIN is not read while the pace holds the upstream paused (the raw front's pacer).
    const t0 = performance.now();
    const got = await sequentialExchanges(port, [
      getBytes("paced", `/ended/${48 * KIB}`),
      getBytes("fast", `/length/${KIB}`, true),
    ]);
    expect(got.map((r) => r.status)).toEqual([200, 200]);
    expectBody(got[0]?.body ?? new Uint8Array(), 48 * KIB);
    expectBody(got[1]?.body ?? new Uint8Array(), KIB);
    expect(performance.now() - t0).toBeGreaterThan(200);
  });

  test(`a small paced body is framed as a large one: ${front === "bun" ? "chunked (written exception)" : "its Content-Length"}`, async () => {
    const [res] = await sequentialExchanges(port, [getBytes("paced", "/length/100", true)]);
    expectBody(res?.body ?? new Uint8Array(), 100);
    if (front === "raw") expect(res?.headers["content-length"]).toBe("100");
    else {
      expect(res?.headers["transfer-encoding"]).toBe("chunked");
      expect(res?.headers["content-length"]).toBeUndefined();
    }
  });

  test("HEAD on a paced route answers at once", async () => {
    const { res, bytes, ms } = await get("paced", `/length/${128 * KIB}`, { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(bytes.length).toBe(0);
    expect(ms).toBeLessThan(700);
  });

  test("the upstream is held back while the body waits (not read ahead), and released when the client goes", async () => {
    // 1 MiB/s from the first byte; 32 MiB is more than loopback's socket buffers take (a few MiB).
    const ctrl = new AbortController();
    const res = await fetch(`http://127.0.0.1:${port}/length/${32 * 1024 * KIB}/held${front}`, {
      headers: { host: "slow.bw.test" },
      signal: ctrl.signal,
    });
    const reader = res.body?.getReader();
    let got = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < 600) {
      const r = await reader?.read();
      if (r === undefined || r.done) break;
      got += r.value.length;
    }
    expect(got).toBeLessThan(2 * 1024 * KIB);
    expect(backend.written.get(`held${front}`)?.done).toBe(false);
    ctrl.abort();
    // The gateway lets go of the upstream: the next request is served as ever.
    const after = await get("fast", `/length/${KIB}`);
    expectBody(after.bytes, KIB);
  });
});
