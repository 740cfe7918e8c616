import { expect, test } from "bun:test";
import type { ResponseCompression } from "../../model/index.ts";
import {
  compileCompression,
  compressibleResponse,
  editEncodedFields,
  requestedCoding,
  varyWithAcceptEncoding,
  weakETag,
} from "./response-rules.ts";

const model: ResponseCompression = {
  source: { kind: "Gatehouse", namespace: "", name: "--compression" },
  codings: ["gzip", "br"],
  types: ["text/html", "application/json", "image/*"],
  minBytes: 256,
  gzipLevel: 1,
  brotliQuality: 4,
  zstdLevel: 3,
};
const c = compileCompression(model);

const fields = (h: Record<string, string>) => new Headers(h);

test("compiled once per model object", () => {
  expect(compileCompression(model)).toBe(c);
  expect(compileCompression({ ...model })).not.toBe(c);
});

test.each([
  // [status, content length, fields, compressible]
  [200, 1000, { "content-type": "application/json" }, true],
  [200, -1, { "content-type": "text/html; charset=utf-8" }, true],
  [404, 1000, { "content-type": "TEXT/HTML" }, true],
  [200, 1000, { "content-type": "image/svg+xml" }, true],
  [200, 255, { "content-type": "text/html" }, false],
  [200, 256, { "content-type": "text/html" }, true],
  [200, 1000, { "content-type": "text/css" }, false],
  [200, 1000, {}, false],
  [200, 1000, { "content-type": "text/html", "content-encoding": "gzip" }, false],
  [200, 1000, { "content-type": "text/html", "content-encoding": "identity" }, false],
  [200, 1000, { "content-type": "text/html", "cache-control": "public, No-Transform" }, false],
  [200, 1000, { "content-type": "text/html", "cache-control": "no-transformed, max-age=5" }, true],
  [200, 1000, { "content-type": "text/html", "content-range": "bytes 0-9/100" }, false],
  [206, 1000, { "content-type": "text/html" }, false],
  [204, -1, { "content-type": "text/html" }, false],
  [304, -1, { "content-type": "text/html" }, false],
  [101, -1, { "content-type": "text/html" }, false],
] as const)("status %p, length %p, %p: compressible %p", (status, length, h, expected) => {
  expect(compressibleResponse(c, status, length, fields(h))).toBe(expected);
});

test("gRPC is never recoded, even with every type", () => {
  const any = compileCompression({ ...model, types: ["*"] });
  expect(compressibleResponse(any, 200, -1, fields({ "content-type": "application/grpc+proto" }))).toBe(
    false,
  );
  expect(compressibleResponse(any, 200, -1, fields({ "content-type": "video/mp4" }))).toBe(true);
});

test("the request: HEAD and Range get none; else the coding accepted", () => {
  expect(requestedCoding(c, "GET", "br, gzip", false)).toBe("gzip");
  expect(requestedCoding(c, "HEAD", "gzip", false)).toBeUndefined();
  expect(requestedCoding(c, "GET", "gzip", true)).toBeUndefined();
  expect(requestedCoding(c, "POST", "zstd", false)).toBeUndefined();
});

test("Vary, ETag and the encoded head's fields", () => {
  expect(varyWithAcceptEncoding(null)).toBe("Accept-Encoding");
  expect(varyWithAcceptEncoding("Origin")).toBe("Origin, Accept-Encoding");
  expect(varyWithAcceptEncoding("origin, accept-encoding")).toBeUndefined();
  expect(varyWithAcceptEncoding("*")).toBeUndefined();
  expect(weakETag('"x"')).toBe('W/"x"');
  expect(weakETag('W/"x"')).toBe('W/"x"');
  const h = fields({ "content-length": "10", "accept-ranges": "bytes", etag: '"e"', vary: "Origin" });
  editEncodedFields(h, "br");
  expect([...h]).toEqual([
    ["content-encoding", "br"],
    ["etag", 'W/"e"'],
    ["vary", "Origin, Accept-Encoding"],
  ]);
  const plain = fields({ "content-length": "10", etag: '"e"' });
  editEncodedFields(plain, undefined);
  expect([...plain]).toEqual([
    ["content-length", "10"],
    ["etag", '"e"'],
    ["vary", "Accept-Encoding"],
  ]);
});
