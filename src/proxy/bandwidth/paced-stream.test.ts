import { expect, test } from "bun:test";
import { pacedResponse, pacedStream } from "./paced-stream.ts";

const KIB = 1024;

/** A source of `chunks` chunks of `size` bytes (byte i of the whole is i mod 251), counting its reads. */
function source(chunks: number, size: number) {
  const counter = { pulls: 0, cancelled: false };
  let at = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(c) {
        counter.pulls++;
        if (counter.pulls > chunks) {
          c.close();
          return;
        }
        const b = new Uint8Array(size);
        for (let i = 0; i < size; i++) b[i] = (at + i) % 251;
        at += size;
        c.enqueue(b);
      },
      cancel() {
        counter.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, counter };
}

test("a body is passed on whole, at the pace: 96 KiB at 128 KiB/s after 32 KiB in about 0.5 s", async () => {
  const { stream } = source(3, 32 * KIB);
  const t0 = performance.now();
  const bytes = new Uint8Array(
    await new Response(
      pacedStream(stream, { bytesPerSecond: 128 * KIB, fullSpeedBytes: 32 * KIB }),
    ).arrayBuffer(),
  );
  const ms = performance.now() - t0;
  expect(bytes.length).toBe(96 * KIB);
  expect(bytes.every((b, i) => b === i % 251)).toBe(true);
  expect(ms).toBeGreaterThan(450);
  expect(ms).toBeLessThan(1500);
});

test("the source is read only as the pace lets its bytes out: one chunk ahead at most", async () => {
  const { stream, counter } = source(100, 16 * KIB);
  const reader = pacedStream(stream, { bytesPerSecond: 64 * KIB, fullSpeedBytes: 0 }).getReader();
  let got = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 300) got += (await reader.read()).value?.length ?? 0;
  // About 19 KiB in 300 ms (more if the last read came late): two chunks read, not a hundred.
  expect(got).toBeLessThan(32 * KIB);
  expect(counter.pulls).toBeLessThanOrEqual(3);
  await reader.cancel();
  expect(counter.cancelled).toBe(true);
});

test("pacedResponse keeps status and headers but Content-Length; a bodiless response is returned as it is", async () => {
  const headers = { "x-a": "1", "content-length": "5" };
  const res = new Response("hello", { status: 201, statusText: "Made", headers });
  const paced = pacedResponse(res, { bytesPerSecond: 1, fullSpeedBytes: 5 });
  expect([paced.status, paced.statusText, paced.headers.get("x-a")]).toEqual([201, "Made", "1"]);
  expect(paced.headers.get("content-length")).toBeNull();
  expect(await paced.text()).toBe("hello");
  const empty = new Response(null, { status: 204 });
  expect(pacedResponse(empty, { bytesPerSecond: 1, fullSpeedBytes: 0 })).toBe(empty);
});

test("Bun.serve sends a paced body chunked whatever its size (a small one too), an empty one with length 0", async () => {
  const server = Bun.serve({
    port: 0,
    fetch(req) {
      const n = Number(new URL(req.url).pathname.slice(1));
      // A source whose end follows its only read at once: what Bun would otherwise send with a length.
      const { stream } = source(n === 0 ? 0 : 1, n);
      const res = new Response(stream, { headers: { "content-length": String(n) } });
      return pacedResponse(res, { bytesPerSecond: 64 * KIB, fullSpeedBytes: 64 * KIB });
    },
  });
  try {
    for (const n of [10, 200, 20 * KIB]) {
      const res = await fetch(`http://127.0.0.1:${server.port}/${n}`);
      expect([res.headers.get("transfer-encoding"), res.headers.get("content-length")]).toEqual([
        "chunked",
        null,
      ]);
      expect((await res.arrayBuffer()).byteLength).toBe(n);
    }
    const empty = await fetch(`http://127.0.0.1:${server.port}/0`);
    expect([empty.headers.get("transfer-encoding"), empty.headers.get("content-length")]).toEqual([
      null,
      "0",
    ]);
  } finally {
    server.stop(true);
  }
});
