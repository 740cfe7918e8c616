/** ingress-nginx's upstream time limits and retries (src/translate/ingress/annotations/proxy-timeouts.ts). */
import { expect } from "bun:test";
import type { AnnotationCase } from "./harness.ts";

export const cases: readonly AnnotationCase[] = [
  {
    name: "proxy-read-timeout: a backend slower than it gets 504 after that many seconds, not the default 60",
    covers: ["proxy-read-timeout"],
    annotations: { "proxy-read-timeout": "1" },
    request: { path: "/slow/3000" },
    check(res) {
      expect(res.status).toBe(504);
      expect(res.ms).toBeGreaterThan(900);
      expect(res.ms).toBeLessThan(2800);
    },
  },
  {
    name: "proxy-read-timeout: a backend within it is served",
    covers: ["proxy-read-timeout"],
    annotations: { "proxy-read-timeout": "2" },
    request: { path: "/slow/300" },
    check(res) {
      expect([res.status, res.body]).toEqual([200, "slow"]);
    },
  },
  {
    name: "proxy-send-timeout: a backend that takes no body gets cut after that many seconds (504)",
    covers: ["proxy-send-timeout"],
    annotations: { "proxy-send-timeout": "1" },
    request: { path: "/noread", method: "POST", body: "x".repeat(48 * 1024 * 1024) },
    check(res) {
      expect(res.status).toBe(504);
      expect(res.ms).toBeLessThan(4000);
    },
  },
  {
    name: "proxy-next-upstream http_503 with tries 2: a 503 is retried and the second answer served",
    covers: ["proxy-next-upstream", "proxy-next-upstream-tries"],
    annotations: { "proxy-next-upstream": "error timeout http_503", "proxy-next-upstream-tries": "2" },
    request: { path: "/flaky/retried" },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.path).toBe("/flaky/retried");
    },
  },
  {
    name: "proxy-next-upstream off: the 503 is passed on",
    covers: ["proxy-next-upstream"],
    annotations: { "proxy-next-upstream": "off", "proxy-next-upstream-tries": "3" },
    request: { path: "/flaky/not-retried" },
    check(res) {
      expect([res.status, res.body]).toEqual([503, "flaky"]);
    },
  },
  {
    name: "proxy-next-upstream-timeout: tries stop once that many seconds have passed",
    covers: ["proxy-next-upstream-timeout"],
    annotations: {
      "proxy-next-upstream": "timeout",
      "proxy-next-upstream-tries": "5",
      "proxy-next-upstream-timeout": "1",
    },
    request: { path: "/slow/3000" },
    check(res) {
      expect(res.status).toBe(504);
      expect(res.ms).toBeLessThan(2800);
    },
  },
];
