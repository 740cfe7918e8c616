/**
 * The encoder drives node:zlib handles directly (encoder.ts says why): these pin what it relies on in
 * Bun's node:zlib, so an upgrade that changes it fails here first, and check that pooled coders, output
 * larger than the scratch buffer and two responses coded at once all come out whole.
 */
import { expect, test } from "bun:test";
import zlib from "node:zlib";
import type { ContentCoding } from "../../model/index.ts";
import { pooledCoders, ResponseEncoder } from "./encoder.ts";

const settings = { gzipLevel: 1, brotliQuality: 4, zstdLevel: 3 };
const decode: Record<ContentCoding, (b: Buffer) => Buffer> = {
  gzip: (b) => zlib.gunzipSync(b),
  br: (b) => zlib.brotliDecompressSync(b),
  zstd: (b) => zlib.zstdDecompressSync(b),
};

function text(n: number, seed = 0): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = 97 + ((i * 7 + seed + Math.floor(i / 101)) % 26);
  return b;
}

/** `parts` through one encoder, each read flushed, bare output. */
function encode(coding: ContentCoding, parts: readonly Buffer[]): Buffer[] {
  const e = new ResponseEncoder(coding, settings);
  const out: Buffer[] = [];
  parts.forEach((p, i) => {
    e.push(p);
    const last = i === parts.length - 1;
    const got = e.take(last, false);
    expect(e.failed).toBe(false);
    if (got !== undefined) out.push(got);
  });
  return out;
}

test("the node:zlib internals the encoder drives are there", () => {
  for (const make of [
    () => zlib.createGzip(),
    () => zlib.createBrotliCompress(),
    () => zlib.createZstdCompress(),
  ]) {
    const s = make() as unknown as { _handle: Record<string, unknown>; _writeState: unknown };
    expect(typeof s._handle.writeSync).toBe("function");
    expect(typeof s._handle.reset).toBe("function");
    expect(typeof s._handle.close).toBe("function");
    expect(s._writeState).toBeInstanceOf(Uint32Array);
  }
});

for (const coding of ["gzip", "br", "zstd"] as const)
  test(`${coding}: every read is flushed, so what came so far decodes; the whole round-trips`, () => {
    const parts = [text(3000, 1), text(5000, 2), text(10, 3)];
    const out = encode(coding, parts);
    expect(out.length).toBe(3);
    expect(decode[coding](Buffer.concat(out)).equals(Buffer.concat(parts))).toBe(true);
    if (coding === "gzip") {
      const early = zlib.gunzipSync(out[0] as Buffer, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
      expect(early.equals(parts[0] as Buffer)).toBe(true);
    }
  });

test("chunked framing: one chunk per take, the last chunk after the last", () => {
  const e = new ResponseEncoder("gzip", settings);
  e.push(text(1000));
  const first = e.take(false, true) as Buffer;
  const last = e.take(true, true) as Buffer;
  const size = Number.parseInt(first.toString("latin1", 0, first.indexOf("\r\n")), 16);
  expect(first.length).toBe(first.indexOf("\r\n") + 2 + size + 2);
  expect(last.toString("latin1").endsWith("\r\n0\r\n\r\n")).toBe(true);
  // A take with nothing new is nothing; the end with nothing new is the trailer's bytes and the last chunk.
  const quiet = new ResponseEncoder("gzip", settings);
  quiet.push(text(10));
  quiet.take(false, true);
  expect(quiet.take(false, true)).toBeUndefined();
  expect(quiet.take(true, true)?.toString("latin1").endsWith("0\r\n\r\n")).toBe(true);
});

test("output larger than the scratch buffer (incompressible input) comes out whole", () => {
  const random = Buffer.from(crypto.getRandomValues(new Uint8Array(60_000)));
  const parts = [Buffer.concat([random, random.subarray(0, 50_000)]), random];
  for (const coding of ["gzip", "zstd"] as const)
    expect(decode[coding](Buffer.concat(encode(coding, parts))).equals(Buffer.concat(parts))).toBe(true);
});

test("two responses coded at once keep their bytes apart", () => {
  const a = new ResponseEncoder("gzip", settings);
  const b = new ResponseEncoder("zstd", settings);
  const outA: Buffer[] = [];
  const outB: Buffer[] = [];
  a.push(text(4000, 1));
  b.push(text(4000, 2));
  a.push(text(4000, 3));
  outB.push(b.take(false, false) as Buffer);
  outA.push(a.take(true, false) as Buffer);
  b.push(text(100, 4));
  outB.push(b.take(true, false) as Buffer);
  expect(zlib.gunzipSync(Buffer.concat(outA)).equals(Buffer.concat([text(4000, 1), text(4000, 3)]))).toBe(
    true,
  );
  expect(
    zlib.zstdDecompressSync(Buffer.concat(outB)).equals(Buffer.concat([text(4000, 2), text(100, 4)])),
  ).toBe(true);
});

test("gzip and zstd coders are reused, a cut one reset first; Brotli's never", () => {
  // Levels no other test uses: their pools start empty.
  const own = { gzipLevel: 4, brotliQuality: 7, zstdLevel: 7 };
  for (const coding of ["gzip", "zstd"] as const) {
    const before = pooledCoders();
    const first = new ResponseEncoder(coding, own);
    first.push(text(2000));
    first.take(true, false);
    expect(pooledCoders()).toBe(before + 1);
    // A response cut halfway gives its coder back (once); the next response on it starts clean.
    const cut = new ResponseEncoder(coding, own);
    expect(pooledCoders()).toBe(before);
    cut.push(text(5000, 9));
    cut.take(false, false);
    cut.release();
    cut.release();
    expect(pooledCoders()).toBe(before + 1);
    const again = new ResponseEncoder(coding, own);
    again.push(text(2000, 5));
    expect(decode[coding](again.take(true, false) as Buffer).equals(text(2000, 5))).toBe(true);
  }
  const before = pooledCoders();
  const br = new ResponseEncoder("br", own);
  br.push(text(2000));
  br.take(true, false);
  expect(pooledCoders()).toBe(before);
});

test("levels differ by pool: a level 9 coder is not handed out for level 1", () => {
  const fast = Buffer.concat(encode("gzip", [text(50_000)]));
  const best = new ResponseEncoder("gzip", { ...settings, gzipLevel: 9 });
  best.push(text(50_000));
  const out = best.take(true, false) as Buffer;
  expect(out.length).toBeLessThan(fast.length);
  expect(zlib.gunzipSync(out).equals(text(50_000))).toBe(true);
});
