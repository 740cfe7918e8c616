import { expect, test } from "bun:test";
import { VerifyGate } from "./verify-gate.ts";

function deferred(): { promise: Promise<boolean>; resolve: (v: boolean) => void } {
  let resolve!: (v: boolean) => void;
  const promise = new Promise<boolean>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

test("runs at most `running` at once, queues `waiting`, turns the rest away", async () => {
  const gate = new VerifyGate(2, 1);
  const works = [deferred(), deferred(), deferred()];
  let started = 0;
  const runs = works.map((w) =>
    gate.run(() => {
      started++;
      return w.promise;
    }),
  );
  expect(runs.every((r) => r !== undefined)).toBe(true);
  expect(started).toBe(2);
  expect(gate.load).toEqual({ running: 2, waiting: 1 });
  expect(gate.run(async () => true)).toBeUndefined();
  works[0]?.resolve(true);
  await runs[0];
  await Bun.sleep(0);
  expect(started).toBe(3);
  // A newcomer while the handed-over slot is busy waits (never a third running).
  const late = gate.run(async () => true);
  expect(gate.load).toEqual({ running: 2, waiting: 1 });
  works[1]?.resolve(false);
  works[2]?.resolve(true);
  expect(await Promise.all([runs[1], runs[2], late])).toEqual([false, true, true]);
  expect(gate.load).toEqual({ running: 0, waiting: 0 });
});

test("a failing verification frees its slot", async () => {
  const gate = new VerifyGate(1, 0);
  await expect(gate.run(() => Promise.reject(new Error("boom"))) as Promise<unknown>).rejects.toThrow("boom");
  expect(gate.load.running).toBe(0);
  expect(await gate.run(async () => 1)).toBe(1);
});
