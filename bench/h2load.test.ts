import { expect, test } from "bun:test";
import { h2loadArgs, parseH2load } from "./h2load.ts";

// h2load 1.52's summary, as printed (lines that are not read cut).
const summary = `finished in 3.00s, 18218.33 req/s, 1.62MB/s
requests: 54655 total, 54687 started, 54655 done, 54650 succeeded, 3 failed, 2 errored, 0 timeout
status codes: 54650 2xx, 0 3xx, 0 4xx, 3 5xx
time for request:      298us     33.74ms      1.70ms      1.24ms    95.10%`;

test("req/s and errors from the summary, p50/p99 from the per-request log", () => {
  // start (µs), status, duration (µs): 100 requests of 1..100 ms.
  const log = Array.from({ length: 100 }, (_, i) => `1700000000${i}\t200\t${(i + 1) * 1000}`).join("\n");
  expect(parseH2load(summary, `${log}\n`)).toEqual({
    rps: 18218.33,
    requests: 54655,
    p50Ms: 51,
    p99Ms: 100,
    errors: 5,
  });
});

test("an output it cannot read is an error, not zeros", () => {
  expect(() => parseH2load("h2load: connect refused", "")).toThrow("cannot parse h2load output");
});

test("the command line: one thread, connections, streams, duration, body and headers", () => {
  expect(
    h2loadArgs({
      url: "http://127.0.0.1:1/a.B/C",
      seconds: 5,
      connections: 8,
      streams: 4,
      body: "/tmp/b",
      headers: { te: "trailers" },
      logFile: "/tmp/l",
    }),
  ).toEqual([
    "h2load",
    "-t1",
    "-c8",
    "-m4",
    "-D5",
    "-d",
    "/tmp/b",
    "--log-file",
    "/tmp/l",
    "-H",
    "te: trailers",
    "http://127.0.0.1:1/a.B/C",
  ]);
});
