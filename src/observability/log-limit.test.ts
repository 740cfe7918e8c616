import { expect, test } from "bun:test";
import { rateLimitedLog } from "./log-limit.ts";
import { createLogger, setLogSink } from "./logger.ts";

test("one line per key per window; the next one counts what was suppressed", () => {
  const lines: Record<string, unknown>[] = [];
  const restore = setLogSink((l) => lines.push(JSON.parse(l)));
  try {
    let clock = 0;
    const log = rateLimitedLog(createLogger(), 10_000, () => clock);
    for (let i = 0; i < 50; i++) log("error", "route-a", "upstream unreachable", { i });
    log("error", "route-b", "upstream unreachable", { i: 0 });
    log("warn", "route-a", "upstream timed out", { i: 0 });
    expect(lines.map((l) => [l.msg, l.i, l.suppressed])).toEqual([
      ["upstream unreachable", 0, undefined],
      ["upstream unreachable", 0, undefined],
      ["upstream timed out", 0, undefined],
    ]);
    clock = 9_999;
    log("error", "route-a", "upstream unreachable", { i: 50 });
    expect(lines.length).toBe(3);
    clock = 10_000;
    log("error", "route-a", "upstream unreachable", { i: 51 });
    expect(lines[3]).toMatchObject({ level: "error", i: 51, suppressed: 50 });
    clock = 30_000;
    log("error", "route-a", "upstream unreachable", { i: 52 });
    expect(lines[4]?.suppressed).toBeUndefined();
  } finally {
    setLogSink(restore);
  }
});
