import { expect, test } from "bun:test";
import { parseWrk, wrkArgs } from "./wrk.ts";

const sample = `Running 2s test @ http://127.0.0.1:8080/
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   758.21us  212.10us   5.01ms   90.00%
    Req/Sec    42.10k     1.20k   44.00k    70.00%
  Latency Distribution
     50%  710.00us
     75%  800.00us
     90%  900.00us
     99%    1.30ms
  84200 requests in 2.00s, 10.00MB read
  Non-2xx or 3xx responses: 3
Requests/sec:  42100.00
Transfer/sec:      5.00MB
`;

test("parseWrk reads throughput, percentiles and errors", () => {
  const r = parseWrk(sample);
  expect(r.rps).toBe(42100);
  expect(r.requests).toBe(84200);
  expect(r.p50Ms).toBeCloseTo(0.71);
  expect(r.p99Ms).toBeCloseTo(1.3);
  expect(r.errors).toBe(3);
  expect(r.readErrors).toBe(0);
});

test("parseWrk counts read errors among the socket errors", () => {
  const r = parseWrk(
    sample.replace(
      "  Non-2xx or 3xx responses: 3\n",
      "  Socket errors: connect 1, read 40, write 2, timeout 0\n",
    ),
  );
  expect(r.errors).toBe(43);
  expect(r.readErrors).toBe(40);
});

test("parseWrk refuses output it cannot read", () => {
  expect(() => parseWrk("wrk: connection refused")).toThrow(/cannot parse/);
});

test("wrkArgs passes headers with -H and the script only when given", () => {
  const args = wrkArgs({
    url: "http://127.0.0.1:1/p",
    seconds: 2,
    connections: 8,
    threads: 1,
    headers: { Host: "a.test", Authorization: "Bearer x.y.z" },
  });
  expect(args).toEqual([
    "wrk",
    "-t1",
    "-c8",
    "-d2s",
    "--latency",
    "-H",
    "Host: a.test",
    "-H",
    "Authorization: Bearer x.y.z",
    "http://127.0.0.1:1/p",
  ]);
  expect(wrkArgs({ url: "u", script: "s.lua", seconds: 1, connections: 1, threads: 1 }).slice(-3)).toEqual([
    "-s",
    "s.lua",
    "u",
  ]);
});

test("wrkArgs refuses a header that would split the request", () => {
  const bad = { url: "u", seconds: 1, connections: 1, threads: 1 };
  expect(() => wrkArgs({ ...bad, headers: { "x-a": "1\r\nx-b: 2" } })).toThrow(/bad header/);
  expect(() => wrkArgs({ ...bad, headers: { "x a": "1" } })).toThrow(/bad header/);
});
