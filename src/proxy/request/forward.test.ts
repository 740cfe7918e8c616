import { describe, expect, test } from "bun:test";
import type { RetryPolicy, RouteTimeouts } from "../../model/index.ts";
import type { CompiledRoute } from "../table.ts";
import { limit, outlastsIdle } from "./forward.ts";

const routeWith = (timeouts?: RouteTimeouts, retry?: RetryPolicy) => ({ timeouts, retry }) as CompiledRoute;

describe("time limits", () => {
  test("0 (Gateway API 0s) means no limit", () => {
    expect(limit(0)).toBe(Number.POSITIVE_INFINITY);
    expect(limit(250)).toBe(250);
  });

  test("a route may outlast the listener's idle timeout only through long or disabled limits", () => {
    const idle = 75_000;
    expect(outlastsIdle(routeWith(), 60_000, idle)).toBe(false);
    expect(outlastsIdle(routeWith({ requestMs: 0 }), 60_000, idle)).toBe(true);
    expect(outlastsIdle(routeWith({ backendRequestMs: 0 }), 60_000, idle)).toBe(true);
    expect(outlastsIdle(routeWith({ requestMs: 120_000 }), 60_000, idle)).toBe(true);
    expect(outlastsIdle(routeWith({ requestMs: 10_000, backendRequestMs: 0 }), 60_000, idle)).toBe(false);
    expect(
      outlastsIdle(
        routeWith({ backendRequestMs: 30_000 }, { attempts: 2, codes: [503], backoffMs: 0 }),
        60_000,
        idle,
      ),
    ).toBe(true);
  });
});
