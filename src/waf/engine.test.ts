/**
 * The engine itself (real libmodsecurity3, Debian's CRS), run on this thread as its worker runs it:
 * verdicts, rule sets shared and freed, a rule set the engine refuses, a library that is absent.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RouteWaf } from "../model/index.ts";
import { type CompiledWaf, compileWaf } from "./compiled.ts";
import { verdictOutcome } from "./decide.ts";
import { wafDecisions } from "./decisions.ts";
import { ruleSetDirectives } from "./directives.ts";
import { type RuleSet, WafEngine, wafEngine } from "./engine.ts";
import { engineQueue, type RuleSetHandle } from "./engine-queue.ts";
import { packRequest, type WafRequest } from "./protocol.ts";
import { enforcedCrs } from "./testing/settings.ts";
import { inspectRequest } from "./transaction.ts";

const settings = enforcedCrs("shop", "web");

function engine(): WafEngine {
  const e = wafEngine();
  if (!(e instanceof WafEngine)) throw new Error(e.error);
  return e;
}

function acquired(e: WafEngine, s: RouteWaf = settings): RuleSet {
  const set = e.acquire(ruleSetDirectives(s));
  if ("error" in set) throw new Error(set.error);
  return set;
}

const request = (over: Partial<WafRequest>) =>
  packRequest({
    clientAddress: "192.0.2.7",
    clientPort: 40000,
    serverAddress: "127.0.0.1",
    serverPort: 8080,
    method: "GET",
    target: "/",
    httpVersion: "1.1",
    headers: [
      ["Host", "shop.example"],
      ["User-Agent", "Mozilla/5.0"],
      ["Accept", "*/*"],
    ],
    transactionId: "test",
    ...over,
  });

describe("the engine", () => {
  // This file parses rules on the test's own thread, and the library's parser takes one thread at a
  // time: no worker of an earlier file (or of this one) may still be running.
  beforeAll(async () => {
    engineQueue.stop();
    await engineQueue.whenEnded();
  });

  test("a clean request passes, an attack is refused with the rule that matched", () => {
    const e = engine();
    const set = acquired(e);
    try {
      expect(inspectRequest(e, set, request({ target: "/items?page=2" })).disruptive).toBe(false);
      const v = inspectRequest(e, set, request({ target: "/items?id=1%27%20OR%20%271%27%3D%271" }));
      expect(v.disruptive).toBe(true);
      expect(v.status).toBe(403);
      expect(v.rules).toContain("942100");
      expect(v.log).toContain("949110");
    } finally {
      e.release(ruleSetDirectives(settings), set);
    }
  });

  test("an excluded rule id no longer blocks; the same settings share one rule set", () => {
    const e = engine();
    const without = { ...settings, excludedRuleIds: [942100] };
    const a = acquired(e, without);
    const b = acquired(e, without);
    try {
      expect(a).toBe(b);
      expect(a.holders).toBe(2);
      const v = inspectRequest(e, a, request({ target: "/items?id=1%27%20OR%20%271%27%3D%271" }));
      expect(v.rules).not.toContain("942100");
    } finally {
      e.release(ruleSetDirectives(without), a);
    }
    expect(a.freed).toBe(false);
    e.release(ruleSetDirectives(without), b);
    expect(a.freed).toBe(true);
  });

  test("a compiled route's rule set is let go once the route is garbage", async () => {
    const own = { ...settings, paranoiaLevel: 3 as const };
    const sets = engineQueue.ruleSets;
    let set: RuleSetHandle | undefined;
    (() => {
      const compiled = compileWaf("r", own, () => {});
      set = compiled.ruleSet;
    })();
    expect(engineQueue.ruleSets).toBe(sets + 1);
    for (let i = 0; i < 20 && set?.holders !== 0; i++) {
      Bun.gc(true);
      await Bun.sleep(10);
    }
    expect(set?.holders).toBe(0);
    expect(engineQueue.ruleSets).toBe(sets);
    engineQueue.stop();
    // The tests below parse rules on this thread: the worker must be gone first.
    await engineQueue.whenEnded();
  });

  test("a rule set the engine refuses is an error, not a crash", () => {
    const set = engine().acquire("SecRuleEngine On\nSecNoSuchDirective 1\n");
    expect("error" in set && set.error).toContain("did not load");
  });

  test("rules it would have to read from a directory or nowhere are refused before the parser runs (it would end the process)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "gatehouse-waf-include-"));
    try {
      await mkdir(join(dir, "REQUEST-900-A-DIRECTORY.conf"));
      for (const include of [`${dir}/REQUEST-*.conf`, dir, "/nonexistent/gatehouse/REQUEST-*.conf"]) {
        const set = engine().acquire(`SecRuleEngine On\nInclude ${include}\n`);
        expect("error" in set && set.error).toContain(`no readable file for ${include}`);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("an absent library is an error naming it; the warning says the route answers 503", () => {
    const missing = wafEngine("/nonexistent/libmodsecurity.so.3");
    expect("error" in missing && missing.error).toContain("/nonexistent/libmodsecurity.so.3");
    const warnings: string[] = [];
    const previous = process.env.GATEHOUSE_WAF_LIBRARY;
    process.env.GATEHOUSE_WAF_LIBRARY = "/nonexistent/libmodsecurity.so.3";
    try {
      const compiled = compileWaf("r", settings, (w) => warnings.push(w));
      expect(compiled.failure).toContain("could not be loaded");
      expect(warnings[0]).toContain("answer 503");
    } finally {
      if (previous === undefined) delete process.env.GATEHOUSE_WAF_LIBRARY;
      else process.env.GATEHOUSE_WAF_LIBRARY = previous;
    }
  });

  test("a redirect intervention answers its status and Location; detection-only passes it and counts it", () => {
    const e = engine();
    const directives = `SecRuleEngine On\nSecRule ARGS:go "@streq away" "id:1,phase:1,t:none,redirect:https://example.com/blocked"\n`;
    const set = e.acquire(directives);
    if ("error" in set) throw new Error(set.error);
    try {
      const waf = (mode: RouteWaf["mode"]): CompiledWaf => ({
        settings: { ...settings, mode },
        route: `redirect-${mode}`,
        ruleSet: undefined,
      });
      const decide = (mode: RouteWaf["mode"], target: string) =>
        verdictOutcome(waf(mode), inspectRequest(e, set, request({ target })), "test");
      expect(decide("Enforce", "/?go=away")).toEqual({
        pass: false,
        status: 302,
        location: "https://example.com/blocked",
      });
      expect(wafDecisions("redirect-Enforce", "redirect")).toBe(1);
      expect(decide("DetectionOnly", "/?go=away")).toEqual({ pass: true });
      expect(wafDecisions("redirect-DetectionOnly", "detected")).toBe(1);
      expect(decide("Enforce", "/?go=home")).toEqual({ pass: true });
    } finally {
      e.release(directives, set);
    }
  });
});
