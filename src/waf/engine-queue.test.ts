/**
 * The engine on its worker (real libmodsecurity3, Debian's CRS): verdicts come back, a full queue is
 * refused at once, a worker that dies fails closed (what it held and what comes until it is back) and
 * is restarted, a rule set the worker cannot build makes its route answer 503. One CRS load per worker.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { type CompiledWaf, compileWaf, wafFailure } from "./compiled.ts";
import { decideWaf, type WafOutcome } from "./decide.ts";
import { wafDecisions, wafWorkerRestarts } from "./decisions.ts";
import { DEFAULT_QUEUE_LIMIT, engineQueue } from "./engine-queue.ts";
import type { WafRequest } from "./protocol.ts";
import { enforcedCrs } from "./testing/settings.ts";

const settings = enforcedCrs("shop", "queue");

const request = (target: string): WafRequest => ({
  clientAddress: "192.0.2.7",
  clientPort: 40000,
  serverAddress: "127.0.0.1",
  serverPort: 8080,
  method: "POST",
  target,
  httpVersion: "1.1",
  headers: [
    ["Host", "shop.example"],
    ["User-Agent", "Mozilla/5.0"],
    ["Content-Type", "application/x-www-form-urlencoded"],
  ],
  body: Buffer.from("name=ada&note=hello"),
  transactionId: "queue-test",
});
const attack = "/items?id=1%27%20OR%20%271%27%3D%271";

/** Decides until the outcome is a pass (the worker is back), at most `ms`. */
async function passWithin(waf: CompiledWaf, ms: number): Promise<WafOutcome> {
  const until = performance.now() + ms;
  let outcome = await decideWaf(waf, request("/"));
  while (!outcome.pass && performance.now() < until) {
    await Bun.sleep(50);
    outcome = await decideWaf(waf, request("/"));
  }
  return outcome;
}

afterAll(() => {
  engineQueue.configure({ limit: DEFAULT_QUEUE_LIMIT });
  engineQueue.stop();
});

describe("the engine's worker", () => {
  const waf = compileWaf("queue-route", settings, () => {});

  test("answers the verdicts: a clean request passes, an attack is refused; the body crosses too", async () => {
    expect(await decideWaf(waf, request("/items?page=2"))).toEqual({ pass: true });
    expect(await decideWaf(waf, request(attack))).toEqual({ pass: false, status: 403 });
    const xss = { ...request("/comment"), body: Buffer.from("text=%3Cscript%3Ealert(1)%3C/script%3E") };
    expect(await decideWaf(waf, xss)).toEqual({ pass: false, status: 403 });
  });

  test("a full queue answers 503 with Retry-After at once, counted overloaded; the queue drains", async () => {
    engineQueue.configure({ limit: 2 });
    try {
      const overloaded = wafDecisions("queue-route", "overloaded");
      const held = engineQueue.hold(300);
      const queued = decideWaf(waf, request("/"));
      const started = performance.now();
      const refused = await decideWaf(waf, request("/"));
      expect(performance.now() - started).toBeLessThan(100);
      expect(refused).toEqual({ pass: false, status: 503, retryAfter: 1, overloaded: true });
      expect(wafDecisions("queue-route", "overloaded")).toBe(overloaded + 1);
      await held;
      expect(await queued).toEqual({ pass: true });
      expect(engineQueue.waiting).toBe(0);
    } finally {
      engineQueue.configure({ limit: DEFAULT_QUEUE_LIMIT });
    }
  });

  for (const how of ["crash", "kill"] as const) {
    test(`a worker that dies (${how}): what it held and what comes next answer 503; it is restarted`, async () => {
      expect(await decideWaf(waf, request("/"))).toEqual({ pass: true });
      const restarts = wafWorkerRestarts();
      const unavailable = wafDecisions("queue-route", "unavailable");
      // The worker takes messages in order: a crash goes first (what follows it is never answered), a
      // kill ends it in the middle of the hold.
      if (how === "crash") engineQueue.crash(how);
      const held = engineQueue.hold(200);
      const pending = decideWaf(waf, request("/"));
      if (how === "kill") engineQueue.crash(how);
      expect(await pending).toEqual({ pass: false, status: 503, retryAfter: 1 });
      expect((await held).kind).toBe("unavailable");
      // Until a new worker is up, new requests are refused too: never let through uninspected.
      expect(await decideWaf(waf, request(attack))).toEqual({ pass: false, status: 503, retryAfter: 1 });
      expect(wafDecisions("queue-route", "unavailable")).toBe(unavailable + 2);
      expect(wafWorkerRestarts()).toBe(restarts + 1);
      expect(await passWithin(waf, 5000)).toEqual({ pass: true });
      expect(await decideWaf(waf, request(attack))).toEqual({ pass: false, status: 403 });
    });
  }

  test("a rule set the worker cannot build: the route answers 503, and says why", async () => {
    const previous = process.env.GATEHOUSE_WAF_CRS_DIR;
    process.env.GATEHOUSE_WAF_CRS_DIR = "/nonexistent/gatehouse-test/crs";
    let broken: CompiledWaf;
    try {
      broken = compileWaf("broken-route", { ...settings, paranoiaLevel: 2 }, () => {});
    } finally {
      if (previous === undefined) delete process.env.GATEHOUSE_WAF_CRS_DIR;
      else process.env.GATEHOUSE_WAF_CRS_DIR = previous;
    }
    // Sent after the load, so answered after it: the worker has refused the set by then.
    expect(await decideWaf(broken, request("/"))).toEqual({ pass: false, status: 503 });
    expect(wafFailure(broken)).toContain("did not load");
    expect(await decideWaf(broken, request("/"))).toEqual({ pass: false, status: 503 });
    expect(await decideWaf(waf, request("/"))).toEqual({ pass: true });
  });
});
