/**
 * A route's WAF as the proxy runs it, built when the proxy compiles its table (never in translate). The
 * library is opened here the first time a route asks for one, only to tell at once when it is missing;
 * the rule set is built by the engine's worker (engine-queue.ts), which runs every transaction. What
 * cannot run (the library absent, a WAF marked invalid by translate, a rule set the worker refuses) makes
 * the route answer 503 and forward nothing (fail closed); compile reports the first two as a warning, the
 * worker's refusal is logged when it answers.
 */
import type { RouteWaf } from "../model/index.ts";
import { ruleSetDirectives } from "./directives.ts";
import { engineQueue, type RuleSetHandle } from "./engine-queue.ts";
import { libraryPath, openLibrary } from "./library.ts";

export interface CompiledWaf {
  /** The model's settings (mode, body limit and what to do past it). */
  readonly settings: RouteWaf;
  /** The route's name: the metric label and log field. */
  readonly route: string;
  /** The rule set the worker builds for these settings; absent when `failure` is set. */
  readonly ruleSet: RuleSetHandle | undefined;
  /** Why the route fails closed (503) whatever the worker says. */
  readonly failure?: string;
}

/**
 * A compiled route holds its rule set until the route itself is garbage: requests in flight on a table
 * that was swapped out still hold the route, so the set outlives every one of them, and a reload that
 * keeps the same settings shares the set instead of building it again.
 */
const holders = new FinalizationRegistry<RuleSetHandle>((h) => engineQueue.release(h));

export function compileWaf(route: string, waf: RouteWaf, warn: (message: string) => void): CompiledWaf {
  const failed = (failure: string): CompiledWaf => {
    warn(`route ${route}: WAF cannot run (${failure}); its requests answer 503`);
    return { settings: waf, route, ruleSet: undefined, failure };
  };
  if (waf.invalid !== undefined) return failed(waf.invalid);
  const library = libraryPath();
  const lib = openLibrary(library);
  if ("error" in lib) return failed(lib.error);
  const ruleSet = engineQueue.acquire(ruleSetDirectives(waf), route, library);
  const compiled: CompiledWaf = { settings: waf, route, ruleSet };
  holders.register(compiled, ruleSet);
  return compiled;
}

/** Why the route's WAF cannot run now (503 before anything is read), or undefined. */
export function wafFailure(waf: CompiledWaf): string | undefined {
  return waf.failure ?? waf.ruleSet?.error;
}
