import { afterEach, expect, test } from "bun:test";
import { msec, timeIso8601, timeLocal } from "./log-time.ts";

const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

test("nginx's $time_local and $time_iso8601, in the process's time zone", () => {
  process.env.TZ = "UTC";
  const at = Date.UTC(2026, 11, 1, 21, 28, 45, 999);
  expect(timeLocal(at)).toBe("01/Dec/2026:21:28:45 +0000");
  expect(timeIso8601(at)).toBe("2026-12-01T21:28:45+00:00");
  process.env.TZ = "Asia/Kolkata";
  const later = Date.UTC(2026, 0, 9, 22, 5, 3);
  expect(timeLocal(later)).toBe("10/Jan/2026:03:35:03 +0530");
  expect(timeIso8601(later)).toBe("2026-01-10T03:35:03+05:30");
  process.env.TZ = "America/New_York";
  expect(timeLocal(later + 1000)).toBe("09/Jan/2026:17:05:04 -0500");
});

test("$msec: seconds with millisecond resolution", () => {
  expect(msec(1796160525123)).toBe("1796160525.123");
  expect(msec(5)).toBe("0.005");
});
