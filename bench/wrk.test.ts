import { expect, test } from "bun:test";
import { parseWrk } from "./wrk.ts";

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
});

test("parseWrk refuses output it cannot read", () => {
  expect(() => parseWrk("wrk: connection refused")).toThrow(/cannot parse/);
});
