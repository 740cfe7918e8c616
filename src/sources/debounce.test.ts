import { expect, test } from "bun:test";
import { CappedDebounce } from "./debounce.ts";

test("a burst runs once, after the last trigger", async () => {
  let runs = 0;
  const d = new CappedDebounce(20, () => runs++);
  for (let i = 0; i < 10; i++) {
    d.trigger();
    await Bun.sleep(5);
  }
  expect(runs).toBe(0);
  await Bun.sleep(40);
  expect(runs).toBe(1);
});

test("a source that never stops changing still runs within the cap", async () => {
  let runs = 0;
  const d = new CappedDebounce(5, () => runs++); // cap: max(50 ms, 1 s) = 1 s
  const until = Date.now() + 1300;
  while (Date.now() < until) {
    d.trigger();
    await Bun.sleep(2);
  }
  d.cancel();
  expect(runs).toBeGreaterThanOrEqual(1);
});

test("cancel stops a scheduled run", async () => {
  let runs = 0;
  const d = new CappedDebounce(10, () => runs++);
  d.trigger();
  d.cancel();
  await Bun.sleep(30);
  expect(runs).toBe(0);
});
