/**
 * The engine's verdict as what the proxy does, the same on both fronts: pass, or answer with a status
 * (and a Location for a redirect). Counted (`decisions.ts`) and logged; detection-only passes what the
 * engine would block, and says so in both. A WAF that cannot run, or whose engine cannot take the
 * request now, answers 503: never open.
 */

import { rateLimitedLog } from "../observability/log-limit.ts";
import { logger } from "../observability/logger.ts";
import { type CompiledWaf, wafFailure } from "./compiled.ts";
import { countWafDecision } from "./decisions.ts";
import { engineQueue } from "./engine-queue.ts";
import { ruleOf, type WafRequest, type WafVerdict } from "./protocol.ts";

const log = logger.child({ component: "waf" });
/** One line per route and rule per window: an attack burst must not flood the log. */
const limited = rateLimitedLog(log);

export type WafOutcome =
  | { readonly pass: true }
  | {
      readonly pass: false;
      readonly status: number;
      readonly location?: string;
      /** Seconds, for a refusal that is about now rather than the request (a full queue, a restart). */
      readonly retryAfter?: number;
      /** The engine's queue was full: the answer says busy, not unavailable. */
      readonly overloaded?: true;
    };

const PASS: WafOutcome = { pass: true };

/** The request through the engine's worker and what the proxy does with its verdict. */
export async function decideWaf(waf: CompiledWaf, req: WafRequest): Promise<WafOutcome> {
  const failure = wafFailure(waf);
  if (failure !== undefined || waf.ruleSet === undefined) return unavailable(waf, failure);
  const answer = await engineQueue.inspect(waf.ruleSet, req);
  if (answer.kind === "overloaded") return overloaded(waf);
  // A worker that stopped or is restarting is about now: the client may retry; a rule set that did not
  // load stays so until the configuration changes.
  if (answer.kind === "unavailable") return unavailable(waf, answer.why, waf.ruleSet.error === undefined);
  return verdictOutcome(waf, answer.verdict, req.transactionId);
}

/** What the proxy does with the engine's verdict for the request named `transactionId`. */
export function verdictOutcome(waf: CompiledWaf, verdict: WafVerdict, transactionId: string): WafOutcome {
  if (!verdict.disruptive) {
    countWafDecision(waf.route, "pass");
    return PASS;
  }
  const rule = ruleOf(verdict.log);
  const fields = {
    route: waf.route,
    policy: waf.settings.policy,
    transaction: transactionId,
    rule: rule.id,
    reason: rule.msg,
    matched: verdict.rules,
    status: verdict.status,
  };
  // Keyed by the first rule that matched (the attack's, not CRS's anomaly total): one line per attack kind.
  const key = `${waf.route}/${verdict.rules[0] ?? rule.id}`;
  if (waf.settings.mode === "DetectionOnly") {
    countWafDecision(waf.route, "detected");
    limited("warn", key, "WAF detection (detection-only: passed)", fields);
    return PASS;
  }
  if (verdict.url !== undefined) {
    countWafDecision(waf.route, "redirect");
    limited("warn", key, "WAF redirected a request", fields);
    const status = verdict.status >= 300 && verdict.status < 400 ? verdict.status : 302;
    return { pass: false, status, location: verdict.url };
  }
  countWafDecision(waf.route, "block");
  limited("warn", key, "WAF blocked a request", fields);
  return { pass: false, status: verdict.status >= 400 && verdict.status < 600 ? verdict.status : 403 };
}

/** The request's body is over the limit in `Reject` mode. */
export function tooLarge(waf: CompiledWaf): WafOutcome & { pass: false } {
  countWafDecision(waf.route, "too_large");
  return { pass: false, status: 413 };
}

/** A WAF that cannot run (compiled.ts `wafFailure`, or its worker stopped): 503. */
export function unavailable(
  waf: CompiledWaf,
  why: string = wafFailure(waf) ?? "no engine",
  transient = false,
): WafOutcome & { pass: false } {
  countWafDecision(waf.route, "unavailable");
  limited("error", waf.route, "WAF cannot run: request refused (503)", { route: waf.route, error: why });
  return transient ? { pass: false, status: 503, retryAfter: 1 } : { pass: false, status: 503 };
}

/** The engine's queue is full (`--waf-queue-limit`): 503 with Retry-After, the request never queued. */
function overloaded(waf: CompiledWaf): WafOutcome & { pass: false } {
  countWafDecision(waf.route, "overloaded");
  limited("warn", waf.route, "WAF queue full: request refused (503)", { route: waf.route });
  return { pass: false, status: 503, retryAfter: 1, overloaded: true };
}

const titles: Readonly<Record<number, string>> = {
  400: "Bad Request",
  403: "Forbidden",
  413: "Content Too Large",
  503: "Service Unavailable",
};

/** The answer for an outcome that does not pass: problem+json, with a Location for a redirect. */
export function wafResponse(outcome: WafOutcome & { pass: false }, serverHeader: string): Response {
  const headers: Record<string, string> = {
    "content-type": "application/problem+json",
    "cache-control": "no-store",
    server: serverHeader,
  };
  if (outcome.location !== undefined) headers.location = outcome.location;
  if (outcome.retryAfter !== undefined) headers["retry-after"] = String(outcome.retryAfter);
  return new Response(wafProblemBody(outcome), { status: outcome.status, headers });
}

/** The problem+json body of a WAF answer; it names no rule (that is for the log, not the client). */
function wafProblemBody(outcome: WafOutcome & { pass: false }): string {
  const status = outcome.status;
  const detail =
    outcome.overloaded === true
      ? "the web application firewall this route requires is busy; retry later"
      : status === 503
        ? "the web application firewall this route requires is not available"
        : status === 413
          ? "the request body is larger than the web application firewall inspects"
          : "the request was refused by the web application firewall";
  return JSON.stringify({ type: "about:blank", title: titles[status] ?? "Refused", status, detail });
}
