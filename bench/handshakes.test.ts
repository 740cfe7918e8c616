import { expect, test } from "bun:test";
import { responseLength, summarise } from "./handshakes.ts";

test("responseLength: known once the head is complete, from Content-Length", () => {
  const head =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\ncontent-length: 3\r\nConnection: close\r\n\r\n";
  expect(responseLength(head.slice(0, 20))).toBeUndefined();
  expect(responseLength(head)).toBe(head.length + 3);
  expect(responseLength(`${head}ok\n`)).toBe(head.length + 3);
  expect(responseLength("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody")).toBeUndefined();
});

test("summarise: completed requests per second and percentiles", () => {
  const latencies = Array.from({ length: 100 }, (_, i) => i + 1);
  const s = summarise(latencies, 2000, 3);
  expect(s).toEqual({ rps: 50, requests: 100, p50Ms: 50.5, p99Ms: 100, errors: 3 });
  expect(summarise([], 1000, 0).requests).toBe(0);
});
