import { expect, test } from "bun:test";
import type { ObjectStatus } from "../status/types.ts";
import { withStoreHealth } from "./status.ts";

const accepted = { type: "Accepted", status: "True", reason: "Accepted", message: "applies" };
const invalid = { type: "Accepted", status: "False", reason: "Invalid", message: "bad" };

function policy(name: string, conditions: object[]): ObjectStatus {
  return {
    target: { group: "gatehouse.dev", kind: "RateLimitPolicy", namespace: "ns", name },
    generation: 3,
    status: { ancestors: [{ ancestorRef: { kind: "Gateway", name: "gw" }, conditions }] },
  };
}

type Cond = { type: string; status: string; reason: string; observedGeneration?: number };

function conditionsOf(s: ObjectStatus | undefined): Cond[] {
  const ancestors = (s?.status.ancestors ?? []) as { conditions: Cond[] }[];
  return ancestors[0]?.conditions ?? [];
}

test("Degraded is added to accepted ancestors of policies in force, True only for degraded ones", () => {
  const input = [policy("a", [accepted]), policy("b", [accepted]), policy("bad", [invalid])];
  const modes = new Map([
    ["ratelimitpolicy/ns/a", "Closed" as const],
    ["ratelimitpolicy/ns/b", "Open" as const],
  ]);
  const out = withStoreHealth(input, modes, new Set(["ratelimitpolicy/ns/a"]));
  const a = conditionsOf(out[0]).find((c) => c.type === "Degraded");
  expect(a).toMatchObject({ status: "True", reason: "StoreUnavailable", observedGeneration: 3 });
  expect(conditionsOf(out[1]).find((c) => c.type === "Degraded")).toMatchObject({
    status: "False",
    reason: "StoreAvailable",
  });
  // An invalid policy is in force nowhere: left as it was.
  expect(out[2]).toBe(input[2] as ObjectStatus);
  // The input is not changed (translation's statuses are reused on the next health change).
  expect(conditionsOf(input[0])).toEqual([accepted] as never);
});

test("other kinds pass through untouched", () => {
  const route: ObjectStatus = {
    target: { group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "ns", name: "r" },
    status: { parents: [] },
  };
  expect(withStoreHealth([route], new Map(), new Set())[0]).toBe(route);
});
