/**
 * The engine's thread: the Bun Worker engine-queue.ts starts. It opens libmodsecurity3, builds the rule
 * sets the serving thread names by key, and runs each transaction it is sent, one at a time in the order
 * sent, answering the verdict. It logs nothing and decides nothing: the serving thread acts on every
 * answer (decide.ts), so an engine that fails here is a 503 there, never a request let through.
 */
import { type RuleSet, type WafEngine, wafEngine } from "./engine.ts";
import type { FromEngine, ToEngine } from "./protocol.ts";
import { inspectRequest } from "./transaction.ts";

/** The worker's side of its message port. */
interface Port {
  onmessage: ((event: MessageEvent<ToEngine>) => void) | null;
  postMessage(message: FromEngine): void;
}

const port = globalThis as unknown as Port;

let engine: WafEngine | { error: string } = { error: "the engine was not started" };
/** The rule sets by the serving thread's key; a set that did not load keeps why. */
const sets = new Map<number, { readonly directives: string; readonly set: RuleSet } | { error: string }>();

function handle(m: ToEngine): void {
  switch (m.t) {
    case "init":
      engine = wafEngine(m.library);
      return;
    case "load": {
      const built = "error" in engine ? engine : engine.acquire(m.directives);
      if ("error" in built) {
        sets.set(m.key, { error: built.error });
        port.postMessage({ t: "load-failed", key: m.key, error: built.error });
        return;
      }
      sets.set(m.key, { directives: m.directives, set: built });
      port.postMessage({ t: "loaded", key: m.key, rules: built.rules });
      return;
    }
    case "release": {
      const held = sets.get(m.key);
      sets.delete(m.key);
      if (held !== undefined && "set" in held && !("error" in engine))
        engine.release(held.directives, held.set);
      return;
    }
    case "inspect": {
      const held = sets.get(m.key);
      if (held === undefined || "error" in held || "error" in engine) {
        const why = held !== undefined && "error" in held ? held.error : "the rule set is not loaded";
        port.postMessage({ t: "failed", id: m.id, error: "error" in engine ? engine.error : why });
        return;
      }
      try {
        port.postMessage({ t: "verdict", id: m.id, verdict: inspectRequest(engine, held.set, m.req) });
      } catch (err) {
        port.postMessage({ t: "failed", id: m.id, error: (err as Error).message });
      }
      return;
    }
    case "exit":
      for (const key of [...sets.keys()]) handle({ t: "release", key });
      process.exit(0);
      return;
    case "hold":
      Bun.sleepSync(m.ms);
      port.postMessage({ t: "held", id: m.id });
      return;
    case "crash":
      throw new Error("the WAF worker was asked to crash (test)");
  }
}

port.onmessage = (event) => handle(event.data);
