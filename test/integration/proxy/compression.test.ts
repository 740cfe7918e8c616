/**
 * Response compression, live on both fronts (docs/compression.md): `--compression gzip,br,zstd` for
 * Service `bodies`, a BackendTrafficPolicy turning it off for `bodies-off` and one offering Brotli then
 * gzip with a minimum of 10 bytes for `bodies-br`; a route with error pages, which the raw front relays
 * to the full request path. Every body is decompressed here with node:zlib and compared with what the backend sent.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect as h2connect } from "node:http2";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import zlib from "node:zlib";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { annotatedIngressYaml, serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { letters, startCompressionBackend } from "./compression-backend.ts";

const NS = "zip";

function manifests(port: number): string {
  const ingress = (name: string, service: string, annotations: Record<string, string> = {}) =>
    annotatedIngressYaml({ name, namespace: NS, host: `${name}.zip.test`, service, annotations });
  const policy = (name: string, service: string, compression: string) => `apiVersion: gatehouse.dev/v1alpha1
kind: BackendTrafficPolicy
metadata: { name: ${name}, namespace: ${NS} }
spec:
  targetRefs: [{ group: "", kind: Service, name: ${service} }]
  compression: ${compression}
`;
  return [
    ingress("comp", "bodies"),
    ingress("off", "bodies-off"),
    ingress("br", "bodies-br"),
    ingress("relayed", "bodies", { "custom-http-errors": "599", "default-backend": "bodies" }),
    ingress("paced", "bodies", { "limit-rate": "128" }),
    serviceYaml("bodies", NS, port),
    serviceYaml("bodies-off", NS, port),
    serviceYaml("bodies-br", NS, port),
    policy("off", "bodies-off", "[]"),
    policy(
      "br",
      "bodies-br",
      "[{ type: Brotli, brotli: { quality: 5 }, minContentLength: 10 }, { type: Gzip }]",
    ),
  ].join("---\n");
}

const decode: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => zlib.gunzipSync(b),
  br: (b) => zlib.brotliDecompressSync(b),
  zstd: (b) => zlib.zstdDecompressSync(b),
};

forEachFront("response compression, live", (front) => {
  let backend: ReturnType<typeof startCompressionBackend>;
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    backend = startCompressionBackend();
    dir = await mkdtemp(join(tmpdir(), "gatehouse-compression-"));
    await writeFile(join(dir, "zip.yaml"), manifests(backend.port));
    ({ gw, port } = await startTestGateway(
      ["--dir", dir],
      ["--front", front, "--compression", "gzip,br,zstd"],
    ));
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    backend?.stop();
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  /** A GET (or `method`) of `path` on `<host>.zip.test`, body undecoded. */
  const get = async (host: string, path: string, headers: Record<string, string> = {}, method = "GET") => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { host: `${host}.zip.test`, ...headers },
      decompress: false,
    } as RequestInit);
    return { res, body: Buffer.from(await res.arrayBuffer()) };
  };

  for (const coding of ["gzip", "br", "zstd"])
    test(`${coding}: a Content-Length JSON body round-trips; no Content-Length, weak ETag, Vary`, async () => {
      const { res, body } = await get("comp", "/json/20000", { "accept-encoding": coding });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-encoding")).toBe(coding);
      // Chunked; Bun.serve counts a body that ends within its write buffer (`--front bun`, paced-stream.ts).
      expect(res.headers.get("content-length") ?? String(body.length)).toBe(String(body.length));
      expect(res.headers.get("accept-ranges")).toBeNull();
      expect(res.headers.get("etag")).toBe('W/"v1"');
      expect(res.headers.get("vary")).toBe("Accept-Encoding");
      expect(body.length).toBeLessThan(2000);
      expect((decode[coding] as (b: Buffer) => Buffer)(body).equals(letters(20000))).toBe(true);
    });

  test("chunked and close-delimited bodies are compressed as they stream", async () => {
    for (const path of ["/chunked/50000", "/close/30000"]) {
      const { res, body } = await get("comp", path, { "accept-encoding": "gzip" });
      expect(res.headers.get("content-encoding")).toBe("gzip");
      expect(zlib.gunzipSync(body).equals(letters(Number(path.split("/")[2])))).toBe(true);
    }
  });

  test("q-values: the heaviest coding wins, a tie goes to the gateway's order, q=0 refuses", async () => {
    const pick = async (ae: string) => (await get("comp", "/json/5000", { "accept-encoding": ae })).res;
    expect((await pick("gzip;q=0.5, br;q=0.9")).headers.get("content-encoding")).toBe("br");
    expect((await pick("zstd, br, gzip")).headers.get("content-encoding")).toBe("gzip");
    expect((await pick("*;q=0.2, gzip;q=0")).headers.get("content-encoding")).toBe("br");
    expect((await pick("x-gzip")).headers.get("content-encoding")).toBe("gzip");
    const refused = await pick("gzip;q=0, identity");
    expect(refused.headers.get("content-encoding")).toBeNull();
    expect(refused.headers.get("vary")).toBe("Accept-Encoding");
    expect((await pick("gzip;q=0.5, identity")).headers.get("content-encoding")).toBeNull();
    expect((await pick("deflate")).headers.get("content-encoding")).toBeNull();
  });

  test("without Accept-Encoding the body passes untouched, with Vary and its Content-Length", async () => {
    const { res, body } = await get("comp", "/json/5000");
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(res.headers.get("content-length")).toBe("5000");
    expect(res.headers.get("etag")).toBe('"v1"');
    expect(res.headers.get("vary")).toBe("Accept-Encoding");
    expect(body.equals(letters(5000))).toBe(true);
  });

  test("not compressed: below the minimum, another type, already encoded, no-transform", async () => {
    const ae = { "accept-encoding": "gzip, br" };
    const small = await get("comp", "/small", ae);
    expect(small.res.headers.get("content-encoding")).toBeNull();
    expect(small.res.headers.get("vary")).toBeNull();
    expect(small.body.equals(letters(100))).toBe(true);
    const image = await get("comp", "/image/5000", ae);
    expect(image.res.headers.get("content-encoding")).toBeNull();
    expect(image.res.headers.get("content-length")).toBe("5000");
    const encoded = await get("comp", "/encoded/5000", ae);
    expect(encoded.res.headers.get("content-encoding")).toBe("gzip");
    expect(zlib.gunzipSync(encoded.body).equals(letters(5000))).toBe(true);
    const kept = await get("comp", "/no-transform/5000", ae);
    expect(kept.res.headers.get("content-encoding")).toBeNull();
    expect(kept.body.equals(letters(5000))).toBe(true);
  });

  test("not compressed: HEAD, 204, 304, a 206, a Range request", async () => {
    const ae = { "accept-encoding": "gzip" };
    const head = await get("comp", "/json/5000", ae, "HEAD");
    expect(head.res.headers.get("content-encoding")).toBeNull();
    expect(head.res.headers.get("content-length")).toBe("5000");
    for (const code of [204, 304]) {
      const r = await get("comp", `/status/${code}`, ae);
      expect(r.res.status).toBe(code);
      expect(r.res.headers.get("content-encoding")).toBeNull();
      expect(r.res.headers.get("etag")).toBe('"v1"');
    }
    const partial = await get("comp", "/partial/5000", ae);
    expect(partial.res.status).toBe(206);
    expect(partial.res.headers.get("content-encoding")).toBeNull();
    const ranged = await get("comp", "/json/5000", { ...ae, range: "bytes=0-99" });
    expect(ranged.res.headers.get("content-encoding")).toBeNull();
    expect(ranged.body.equals(letters(5000))).toBe(true);
  });

  test("an existing Vary gains Accept-Encoding", async () => {
    const { res } = await get("comp", "/vary/5000", { "accept-encoding": "gzip" });
    expect(res.headers.get("vary")).toBe("Origin, Accept-Encoding");
    expect(res.headers.get("content-encoding")).toBe("gzip");
  });

  test("a policy's compression: [] turns it off; another offers Brotli first with its own minimum", async () => {
    const off = await get("off", "/json/5000", { "accept-encoding": "gzip, br" });
    expect(off.res.headers.get("content-encoding")).toBeNull();
    expect(off.res.headers.get("vary")).toBeNull();
    expect(off.res.headers.get("content-length")).toBe("5000");
    const br = await get("br", "/small", { "accept-encoding": "gzip, br, zstd" });
    expect(br.res.headers.get("content-encoding")).toBe("br");
    expect(zlib.brotliDecompressSync(br.body).equals(letters(100))).toBe(true);
    const zstd = await get("br", "/json/5000", { "accept-encoding": "zstd" });
    expect(zstd.res.headers.get("content-encoding")).toBeNull();
  });

  test("a route the raw front relays to the full request path is compressed once", async () => {
    const { res, body } = await get("relayed", "/json/20000", { "accept-encoding": "gzip" });
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(res.headers.get("vary")).toBe("Accept-Encoding");
    expect(zlib.gunzipSync(body).equals(letters(20000))).toBe(true);
  });

  test("limit-rate paces the compressed bytes: 200 KB of text at 128 KiB/s come in far less than 1.5 s", async () => {
    const t0 = performance.now();
    const { res, body } = await get("paced", "/json/200000", { "accept-encoding": "gzip" });
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(zlib.gunzipSync(body).equals(letters(200000))).toBe(true);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  test("streaming: the client decodes the first chunk before the backend sends the rest", async () => {
    const tag = `t${front}`;
    const res = await fetch(`http://127.0.0.1:${port}/slow/${tag}`, {
      headers: { host: "comp.zip.test", "accept-encoding": "gzip" },
      decompress: false,
    } as RequestInit);
    expect(res.headers.get("content-encoding")).toBe("gzip");
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const got: Buffer[] = [];
    const early = () => zlib.gunzipSync(Buffer.concat(got), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    while (early().length < 2000) {
      const read = await reader.read();
      expect(read.done).toBe(false);
      got.push(Buffer.from(read.value as Uint8Array));
    }
    expect(early().equals(letters(2000))).toBe(true);
    backend.release(tag);
    for (;;) {
      const read = await reader.read();
      if (read.done) break;
      got.push(Buffer.from(read.value));
    }
    expect(zlib.gunzipSync(Buffer.concat(got)).equals(Buffer.concat([letters(2000), letters(3000)]))).toBe(
      true,
    );
  });

  test("HTTP/2 (h2c with prior knowledge) is compressed too", async () => {
    const session = h2connect(`http://127.0.0.1:${port}`);
    session.on("error", () => {});
    try {
      const { headers, body } = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>(
        (resolve, reject) => {
          const r = session.request({
            ":path": "/json/20000",
            ":authority": "comp.zip.test",
            "accept-encoding": "br",
          });
          const parts: Buffer[] = [];
          let headers: Record<string, unknown> = {};
          r.on("response", (h) => {
            headers = h;
          });
          r.on("data", (d: Buffer) => parts.push(d));
          r.on("end", () => resolve({ headers, body: Buffer.concat(parts) }));
          r.on("error", reject);
        },
      );
      expect(headers["content-encoding"]).toBe("br");
      expect(headers.vary).toBe("Accept-Encoding");
      expect(zlib.brotliDecompressSync(body).equals(letters(20000))).toBe(true);
    } finally {
      session.close();
    }
  });

  test("an HTTP/1.0 client gets the compressed body until close", async () => {
    const raw = await new Promise<Buffer>((resolve, reject) => {
      const parts: Buffer[] = [];
      const s = connect(port, "127.0.0.1", () =>
        s.write("GET /json/20000 HTTP/1.0\r\nHost: comp.zip.test\r\nAccept-Encoding: gzip\r\n\r\n"),
      );
      s.on("data", (b: Buffer) => parts.push(b));
      s.on("end", () => resolve(Buffer.concat(parts)));
      s.on("error", reject);
    });
    const at = raw.indexOf("\r\n\r\n");
    const head = raw.subarray(0, at).toString("latin1").toLowerCase();
    expect(head).toContain("content-encoding: gzip");
    expect(head).not.toContain("transfer-encoding");
    expect(zlib.gunzipSync(raw.subarray(at + 4)).equals(letters(20000))).toBe(true);
  });

  test("a huge body is never held whole: a client that does not read holds the backend back", async () => {
    const size = 128 * 1024 * 1024;
    const before = backend.stats.randomWritten;
    // node:net, paused after the first bytes: only the kernel's buffers take what the gateway sends.
    const s = connect(port, "127.0.0.1", () =>
      s.write(`GET /random/${size} HTTP/1.0\r\nHost: comp.zip.test\r\nAccept-Encoding: gzip\r\n\r\n`),
    );
    const parts: Buffer[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      s.on("end", resolve);
      s.on("error", reject);
    });
    await new Promise<void>((resolve) =>
      s.once("data", (b: Buffer) => {
        parts.push(b);
        s.pause();
        resolve();
      }),
    );
    s.on("data", (b: Buffer) => parts.push(b));
    await Bun.sleep(800);
    // Loopback socket buffers grow to 32 MiB here (tcp_rmem), so two hops may take ~70 MiB; a body
    // held whole would be all 128 (measured: 9–32 MiB taken).
    expect(backend.stats.randomWritten - before).toBeLessThan(90 * 1024 * 1024);
    s.resume();
    await ended;
    const raw = Buffer.concat(parts);
    const at = raw.indexOf("\r\n\r\n");
    expect(raw.subarray(0, at).toString("latin1").toLowerCase()).toContain("content-encoding: gzip");
    expect(zlib.gunzipSync(raw.subarray(at + 4)).length).toBe(size);
  }, 60_000);

  test("a backend without compression is passed on byte for byte", async () => {
    const { res, body } = await get("off", "/chunked/10000", { "accept-encoding": "gzip" });
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(body.equals(letters(10000))).toBe(true);
  });
});
