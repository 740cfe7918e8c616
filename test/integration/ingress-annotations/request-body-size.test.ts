/**
 * `proxy-body-size` (nginx `client_max_body_size`), live on both fronts: a Content-Length past the limit is
 * answered 413 before any of the body is sent (the client sends only the head here), and the backend never
 * hears of it; under or equal to the limit the body goes through whole; a chunked body that grows past the
 * limit is cut: 413, the backend having had at most the limit; once the response has started, the client's
 * response is cut instead. `0` and an Ingress without the annotation take any size; a value that is not a
 * size is reported (InvalidAnnotation, in the problems metric) and ingress-nginx's default 1m limits that
 * Ingress. A route the raw front relays to the full request path (error pages) is limited alike.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect as h2connect } from "node:http2";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { annotatedIngressYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const LIMIT = 1024;

/**
 * The backend counts the body bytes each request brought, by the path's last segment, as they arrive (so
 * a body cut midway is counted too). `/early/<tag>` answers its head at once, before reading the body,
 * and ends its response once the body has ended.
 */
function startCountingBackend() {
  const bytes = new Map<string, number>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const tag = path.slice(path.lastIndexOf("/") + 1);
      bytes.set(tag, 0);
      const count = async () => {
        try {
          for await (const c of req.body ?? []) bytes.set(tag, (bytes.get(tag) ?? 0) + c.length);
        } catch {
          // The gateway cut the body: what arrived is counted.
        }
      };
      if (path.startsWith("/early/")) {
        const stream = new ReadableStream<Uint8Array>({
          async start(out) {
            out.enqueue(new TextEncoder().encode("started\n"));
            await count();
            out.close();
          },
        });
        return new Response(stream, { headers: { "content-type": "text/plain" } });
      }
      await count();
      return Response.json({ bytes: bytes.get(tag) });
    },
  });
  return { port: server.port as number, bytes, stop: () => server.stop(true) };
}

function manifests(backendPort: number): string {
  const ingress = (name: string, annotations: Record<string, string>) =>
    annotatedIngressYaml({
      name,
      namespace: "body",
      host: `${name}.body.test`,
      service: "counter",
      annotations,
    });
  return [
    ingress("small", { "proxy-body-size": "1k" }),
    ingress("none", {}),
    ingress("zero", { "proxy-body-size": "0" }),
    // Error pages are not on the raw front's fast path: its requests are relayed to the full request path.
    ingress("relayed", {
      "proxy-body-size": "1k",
      "custom-http-errors": "599",
      "default-backend": "counter",
    }),
    ingress("broken", { "proxy-body-size": "10x" }),
    `apiVersion: v1
kind: Service
metadata: { name: counter, namespace: body }
spec: { ports: [{ port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: counter-1, namespace: body, labels: { kubernetes.io/service-name: counter } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ port: ${backendPort} }]
`,
  ].join("---\n");
}

interface Wire {
  /** Everything the gateway sent. */
  readonly text: string;
  /** The gateway closed (or reset) the connection. */
  readonly closed: boolean;
}

/**
 * Writes `parts` on one connection, each after the one before and `gapMs` apart, the later ones only once
 * a response head has arrived when `afterHead`; then waits up to `waitMs` for the gateway to close.
 */
function exchange(
  port: number,
  parts: readonly (string | Buffer)[],
  o: { gapMs?: number; waitMs?: number; afterHead?: boolean } = {},
): Promise<Wire> {
  return new Promise((resolve) => {
    const got: Buffer[] = [];
    let closed = false;
    const sock = connect(port, "127.0.0.1");
    const done = () => resolve({ text: Buffer.concat(got).toString("latin1"), closed });
    const timer = setTimeout(() => {
      sock.destroy();
      done();
    }, o.waitMs ?? 3000);
    let headSeen: () => void = () => {};
    const head = new Promise<void>((r) => {
      headSeen = r;
    });
    sock.on("data", (c) => {
      got.push(Buffer.from(c));
      if (Buffer.concat(got).includes("\r\n\r\n")) headSeen();
    });
    sock.on("error", () => {});
    sock.on("close", () => {
      closed = true;
      clearTimeout(timer);
      done();
    });
    sock.on("connect", async () => {
      for (const [i, p] of parts.entries()) {
        if (i === 1 && o.afterHead) await head;
        if (i > 0 && o.gapMs) await Bun.sleep(o.gapMs);
        if (sock.destroyed) return;
        sock.write(p);
      }
    });
  });
}

const head = (host: string, path: string, framing: string) =>
  `POST ${path} HTTP/1.1\r\nHost: ${host}.body.test\r\n${framing}\r\n`;
const chunk = (n: number) => `${n.toString(16)}\r\n${"x".repeat(n)}\r\n`;
const status = (w: Wire) => Number(/^HTTP\/1\.1 (\d{3})/.exec(w.text)?.[1] ?? 0);

forEachFront("proxy-body-size, live", (front) => {
  let backend: ReturnType<typeof startCountingBackend>;
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let adminPort: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    backend = startCountingBackend();
    dir = await mkdtemp(join(tmpdir(), "gatehouse-body-size-"));
    await writeFile(join(dir, "body.yaml"), manifests(backend.port));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front]));
    adminPort = gw.admin?.port as number;
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    backend?.stop();
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  // The raw front closes a connection whose body it left unread; Bun.serve keeps it: no long wait there.
  const ex = (parts: readonly (string | Buffer)[], o: Parameters<typeof exchange>[2] = {}) =>
    exchange(port, parts, { waitMs: front === "raw" ? 3000 : 600, ...o });

  const post = async (host: string, tag: string, size: number) => {
    const res = await fetch(`http://127.0.0.1:${port}/p/${tag}`, {
      method: "POST",
      headers: { host: `${host}.body.test` },
      body: "y".repeat(size),
    });
    return { status: res.status, body: await res.text() };
  };

  test("a Content-Length under or equal to the limit goes through whole", async () => {
    expect(await post("small", `${front}-under`, LIMIT - 1)).toEqual({
      status: 200,
      body: JSON.stringify({ bytes: LIMIT - 1 }),
    });
    expect(await post("small", `${front}-equal`, LIMIT)).toEqual({
      status: 200,
      body: JSON.stringify({ bytes: LIMIT }),
    });
  });

  test("a Content-Length past it: 413 at once, the body never sent, the backend never asked", async () => {
    const tag = `${front}-over`;
    // Only the head: a gateway that waited for the body would answer nothing.
    const w = await ex([head("small", `/p/${tag}`, `Content-Length: ${LIMIT + 1}\r\n`)]);
    expect(status(w)).toBe(413);
    expect(w.text).toContain("Content Too Large");
    expect(backend.bytes.has(tag)).toBe(false);
    // The body is unread: the connection cannot carry another request (nginx closes it too).
    if (front === "raw") {
      expect(w.text.toLowerCase()).toContain("connection: close");
      expect(w.closed).toBe(true);
    }
    // A huge declared length changes nothing.
    const big = await ex([head("small", `/p/${tag}-big`, "Content-Length: 10737418240\r\n")]);
    expect(status(big)).toBe(413);
    expect(backend.bytes.has(`${tag}-big`)).toBe(false);
  });

  test("a chunked body under the limit goes through whole", async () => {
    const tag = `${front}-chunked-under`;
    const w = await ex(
      [
        head("small", `/p/${tag}`, "Transfer-Encoding: chunked\r\nConnection: close\r\n"),
        chunk(500),
        chunk(500),
        "0\r\n\r\n",
      ],
      { gapMs: 20 },
    );
    expect(status(w)).toBe(200);
    expect(w.text).toContain(JSON.stringify({ bytes: 1000 }));
  });

  test("a chunked body that grows past the limit: 413, the backend got at most the limit", async () => {
    const tag = `${front}-chunked-over`;
    const parts = [head("small", `/p/${tag}`, "Transfer-Encoding: chunked\r\n"), chunk(600), chunk(600)];
    const w = await ex([...parts, chunk(600), "0\r\n\r\n"], { gapMs: 50 });
    expect(status(w)).toBe(413);
    // The raw front closes at once, the rest unread; Bun.serve reads the rest of the body and goes on.
    if (front === "raw") expect(w.closed).toBe(true);
    expect(backend.bytes.get(tag) ?? 0).toBeLessThanOrEqual(LIMIT);
  });

  test("past the limit once the response has started: the response is cut, the backend got at most the limit", async () => {
    const tag = `${front}-early`;
    const w = await ex(
      [head("small", `/early/${tag}`, "Transfer-Encoding: chunked\r\n"), chunk(600), chunk(600), "0\r\n\r\n"],
      { afterHead: true, gapMs: 50 },
    );
    expect(status(w)).toBe(200);
    expect(w.text).toContain("started");
    // No orderly end of the chunked response: it was cut.
    expect(w.text.endsWith("0\r\n\r\n")).toBe(false);
    expect(w.closed).toBe(true);
    expect(backend.bytes.get(tag) ?? 0).toBeLessThanOrEqual(LIMIT);
  });

  test('"0" and no annotation: no limit, for a Content-Length and a chunked body', async () => {
    const size = 256 * 1024;
    expect(await post("zero", `${front}-zero`, size)).toEqual({
      status: 200,
      body: JSON.stringify({ bytes: size }),
    });
    expect(await post("none", `${front}-none`, size)).toEqual({
      status: 200,
      body: JSON.stringify({ bytes: size }),
    });
    const tag = `${front}-none-chunked`;
    const w = await ex([
      head("none", `/p/${tag}`, "Transfer-Encoding: chunked\r\nConnection: close\r\n"),
      `${chunk(64 * 1024)}${chunk(64 * 1024)}0\r\n\r\n`,
    ]);
    expect(status(w)).toBe(200);
    expect(w.text).toContain(JSON.stringify({ bytes: 128 * 1024 }));
  });

  test("a route the raw front relays to the full request path is limited alike", async () => {
    expect((await post("relayed", `${front}-relayed-ok`, LIMIT)).status).toBe(200);
    const tag = `${front}-relayed-over`;
    const w = await ex([head("relayed", `/p/${tag}`, `Content-Length: ${LIMIT + 1}\r\n`)]);
    expect(status(w)).toBe(413);
    expect(backend.bytes.has(tag)).toBe(false);
    const ctag = `${front}-relayed-chunked`;
    const c = await ex(
      [head("relayed", `/p/${ctag}`, "Transfer-Encoding: chunked\r\n"), chunk(600), chunk(600)],
      {
        gapMs: 50,
      },
    );
    expect(status(c)).toBe(413);
    expect(backend.bytes.get(ctag) ?? 0).toBeLessThanOrEqual(LIMIT);
  });

  test("HTTP/2 (h2c): a body past the limit gets 413, a declared one unsent, a streamed one cut", async () => {
    const s = h2connect(`http://small.body.test:${port}`, {
      createConnection: () => connect({ host: "127.0.0.1", port }),
    });
    s.on("error", () => {});
    const send = (tag: string, parts: string[], length?: number) =>
      new Promise<number>((resolve) => {
        const headers: Record<string, string> = { ":method": "POST", ":path": `/p/${tag}` };
        if (length !== undefined) headers["content-length"] = String(length);
        const r = s.request(headers);
        r.on("response", (h) => resolve(Number(h[":status"])));
        r.on("error", () => resolve(0));
        (async () => {
          for (const p of parts) {
            if (r.destroyed || r.closed) return;
            r.write(p);
            await Bun.sleep(50);
          }
          // A declared length is never sent: the answer must come without it.
          if (!r.destroyed && length === undefined) r.end();
        })();
      });
    try {
      expect(await send(`${front}-h2-ok`, ["a".repeat(500), "a".repeat(500)])).toBe(200);
      expect(backend.bytes.get(`${front}-h2-ok`)).toBe(1000);
      expect(await send(`${front}-h2-declared`, [], LIMIT + 1)).toBe(413);
      expect(backend.bytes.has(`${front}-h2-declared`)).toBe(false);
      expect(await send(`${front}-h2-streamed`, ["a".repeat(600), "a".repeat(600), "a".repeat(600)])).toBe(
        413,
      );
      expect(backend.bytes.get(`${front}-h2-streamed`) ?? 0).toBeLessThanOrEqual(LIMIT);
    } finally {
      s.destroy();
    }
  });

  test('"10x" is reported (InvalidAnnotation, in the problems metric) and 1m limits that Ingress', async () => {
    expect((await post("broken", `${front}-broken-ok`, 1024 * 1024)).status).toBe(200);
    const w = await ex([head("broken", `/p/${front}-broken`, `Content-Length: ${1024 * 1024 + 1}\r\n`)]);
    expect(status(w)).toBe(413);
    const metrics = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
    expect(metrics).toMatch(/gatehouse_translate_problems\{[^}]*reason="InvalidAnnotation"[^}]*\} [1-9]/);
  });
});
