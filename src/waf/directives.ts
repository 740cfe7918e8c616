/**
 * A route's WAF settings as ModSecurity directives. The gateway writes every directive here from
 * structured fields it has checked; no text from users reaches the engine (SecRule can run programs
 * with `exec:`, switch the engine off with `ctl:`, and run backtracking PCRE).
 */
import type { RouteWaf } from "../model/index.ts";

/** Where Debian's `modsecurity-crs` puts the rules; `GATEHOUSE_WAF_CRS_DIR` overrides it (tests). */
export function crsRulesDir(): string {
  const env = process.env.GATEHOUSE_WAF_CRS_DIR;
  return env !== undefined && env !== "" ? env : "/usr/share/modsecurity-crs/rules";
}

/** Tags CRS uses (`attack-sqli`, `paranoia-level/2`, `OWASP_CRS/WEB_ATTACK/XSS`): nothing to quote. */
export const ruleTagPattern = /^[A-Za-z0-9_./:-]{1,128}$/;

/** The settings that change the rule set (the rest is how the proxy acts on its answer). */
export type RuleSetSettings = Pick<
  RouteWaf,
  | "coreRuleSet"
  | "paranoiaLevel"
  | "inboundAnomalyThreshold"
  | "excludedRuleIds"
  | "excludedRuleTags"
  | "requestBodyLimitBytes"
  | "maxArguments"
>;

/**
 * The directives of one rule set. The engine always runs `On`: detection-only is decided by the proxy,
 * which then passes a request the engine would block (so the decision it counts is the real one).
 * Responses are never given to the engine, so only the CRS's REQUEST-* files are loaded.
 */
export function ruleSetDirectives(s: RuleSetSettings, rulesDir: string = crsRulesDir()): string {
  const lines = [
    "SecRuleEngine On",
    "SecRequestBodyAccess On",
    // The proxy hands over at most this many bytes (and answers 413 itself in Reject mode).
    `SecRequestBodyLimit ${s.requestBodyLimitBytes}`,
    `SecRequestBodyNoFilesLimit ${s.requestBodyLimitBytes}`,
    "SecRequestBodyLimitAction ProcessPartial",
    // CRS costs about 0.2 ms per argument here (10,000 took 4.6 s of one core, measured): a request with
    // more is refused before any CRS rule runs. The engine parses one more than the limit, no further.
    `SecArgumentsLimit ${s.maxArguments + 1}`,
    `SecRule &ARGS_GET "@gt ${s.maxArguments}" "id:200004,phase:1,t:none,log,deny,status:400,msg:'Too many arguments'"`,
    `SecRule &ARGS "@gt ${s.maxArguments}" "id:200005,phase:2,t:none,log,deny,status:400,msg:'Too many arguments'"`,
    "SecResponseBodyAccess Off",
    "SecAuditEngine Off",
    // ModSecurity's recommended base rules: pick the body parser by Content-Type, and refuse bodies that
    // claim a type they are not (an attack hidden in a body the engine could not parse is not inspected).
    `SecRule REQUEST_HEADERS:Content-Type "^(?:application(?:/soap\\+|/)|text/)xml" "id:200000,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=XML"`,
    `SecRule REQUEST_HEADERS:Content-Type "^application/json" "id:200001,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"`,
    `SecRule REQBODY_ERROR "!@eq 0" "id:200002,phase:2,t:none,log,deny,status:400,msg:'Failed to parse request body'"`,
    `SecRule MULTIPART_STRICT_ERROR "!@eq 0" "id:200003,phase:2,t:none,log,deny,status:400,msg:'Multipart request body failed strict validation'"`,
  ];
  if (s.coreRuleSet) {
    lines.push(
      // What Debian's crs-setup.conf sets, then the settings CRS reads (REQUEST-901 keeps values set here).
      `SecDefaultAction "phase:1,log,auditlog,pass"`,
      `SecDefaultAction "phase:2,log,auditlog,pass"`,
      `SecAction "id:900990,phase:1,nolog,pass,t:none,setvar:tx.crs_setup_version=334"`,
      `SecAction "id:900000,phase:1,nolog,pass,t:none,setvar:tx.paranoia_level=${s.paranoiaLevel}"`,
      `SecAction "id:900110,phase:1,nolog,pass,t:none,setvar:tx.inbound_anomaly_score_threshold=${s.inboundAnomalyThreshold}"`,
      // CRS 3.3 allows GET HEAD POST OPTIONS only (rule 911100), which blocks every REST API's PUT and
      // DELETE at paranoia level 1. Which methods a route serves is the route's match to decide.
      `SecAction "id:900200,phase:1,nolog,pass,t:none,setvar:'tx.allowed_methods=GET HEAD POST OPTIONS PUT PATCH DELETE'"`,
      `Include ${rulesDir}/REQUEST-*.conf`,
      // Debian's CRS 3.3.4 has no Log4Shell rule (CRS 4 added them): the gateway's own, a JNDI or nested
      // lookup in any header, argument or the URI, excludable by its tag like any CRS rule.
      `SecRule REQUEST_URI|ARGS|ARGS_NAMES|REQUEST_HEADERS|REQUEST_BODY "@rx \\$\\{(?:[^}]{0,16}\\$\\{|\\s*(?:jndi|ctx)\\s*:)" "id:200010,phase:2,t:none,t:urlDecodeUni,t:lowercase,log,deny,status:403,msg:'Log4Shell-style JNDI lookup',tag:'attack-rce',tag:'gatehouse/log4shell'"`,
    );
    for (const id of s.excludedRuleIds) lines.push(`SecRuleRemoveById ${Math.trunc(id)}`);
    for (const tag of s.excludedRuleTags)
      if (ruleTagPattern.test(tag)) lines.push(`SecRuleRemoveByTag "${tag}"`);
  }
  return `${lines.join("\n")}\n`;
}
