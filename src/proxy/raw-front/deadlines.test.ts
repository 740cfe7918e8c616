import { describe, expect, test } from "bun:test";
import { DeadlineList, type Expiring } from "./deadlines.ts";

class Item implements Expiring {
  dlList: DeadlineList | undefined;
  dlPrev: Expiring | undefined;
  dlNext: Expiring | undefined;
  dlDue = 0;
  firedAt = -1;
  constructor(
    readonly name: string,
    private readonly log: string[],
  ) {}
  expired(): void {
    this.firedAt = performance.now();
    this.log.push(this.name);
  }
}

describe("deadline lists", () => {
  test("expire in arming order, each no earlier than its limit; disarmed ones never", async () => {
    const log: string[] = [];
    const list = new DeadlineList(40);
    const items = ["a", "b", "c", "d", "e"].map((n) => new Item(n, log));
    const armedAt: number[] = [];
    for (const it of items) {
      armedAt.push(performance.now());
      list.arm(it, performance.now());
      await Bun.sleep(5);
    }
    // Unlink the first (the timer's target), one in the middle and the last.
    list.disarm(items[0] as Item);
    list.disarm(items[2] as Item);
    list.disarm(items[4] as Item);
    await Bun.sleep(120);
    expect(log).toEqual(["b", "d"]);
    for (const i of [1, 3]) {
      const it = items[i] as Item;
      // Scheduling is in whole ms, so a timer may fire up to half a millisecond early.
      expect(it.firedAt - (armedAt[i] as number)).toBeGreaterThanOrEqual(39);
      expect(it.dlList).toBeUndefined();
    }
    expect(list.empty).toBe(true);
  });

  test("an item disarmed and armed again expires once, from its second arming", async () => {
    const log: string[] = [];
    const list = new DeadlineList(30);
    const it = new Item("x", log);
    list.arm(it, performance.now());
    await Bun.sleep(20);
    list.disarm(it);
    const again = performance.now();
    list.arm(it, again);
    await Bun.sleep(80);
    expect(log).toEqual(["x"]);
    expect(it.firedAt - again).toBeGreaterThanOrEqual(29);
  });

  test("one item's throwing expiry does not stop the next", async () => {
    const log: string[] = [];
    const list = new DeadlineList(10);
    const bad = new Item("bad", log);
    bad.expired = () => {
      log.push("bad");
      throw new Error("boom");
    };
    const good = new Item("good", log);
    const now = performance.now();
    list.arm(bad, now);
    list.arm(good, now);
    await Bun.sleep(50);
    expect(log).toEqual(["bad", "good"]);
  });
});
