/**
 * Header and query-parameter conditions. Regular expressions are compiled once, anchored, by our own
 * linear-time engine (regex/regex.ts): no pattern the translator accepts can stall the event loop.
 */
import type { HeaderMatch, QueryParamMatch } from "../../model/index.ts";
import { compileRegex, type RegexOptions, type ValueRegex } from "./regex/regex.ts";

export interface ValueMatcher {
  readonly name: string;
  /** Exact value, when not a regex. */
  readonly exact: string | undefined;
  readonly regex: ValueRegex | undefined;
}

/** Compiles one condition; undefined when its regex does not compile (the caller makes the route dead). */
export function compileValueMatcher(m: HeaderMatch | QueryParamMatch): ValueMatcher | undefined {
  if (m.type === "Exact") return { name: m.name, exact: m.value, regex: undefined };
  const regex = compileAnchored(m.value);
  return regex ? { name: m.name, exact: undefined, regex } : undefined;
}

/** A matcher for the whole value (as `^(?:v)$` would), or undefined when the engine refuses `v`. */
export function compileAnchored(pattern: string, options?: RegexOptions): ValueRegex | undefined {
  return compileRegex(pattern, options).regex;
}

export function valueMatches(m: ValueMatcher, value: string | null | undefined): boolean {
  if (value === null || value === undefined) return false;
  return m.regex === undefined ? value === m.exact : m.regex.test(value);
}

/**
 * First value of query parameter `name` in `query` (`""` or `?a=1&b=2`), form-decoded; undefined when
 * absent. Scans the string instead of building a map: routes with query conditions are few.
 */
export function firstQueryValue(query: string, name: string): string | undefined {
  let pos = 1;
  while (pos < query.length) {
    let amp = query.indexOf("&", pos);
    if (amp < 0) amp = query.length;
    const eq = query.indexOf("=", pos);
    const keyEnd = eq >= 0 && eq < amp ? eq : amp;
    if (keyEnd > pos && formDecode(query.slice(pos, keyEnd)) === name) {
      return keyEnd === amp ? "" : formDecode(query.slice(keyEnd + 1, amp));
    }
    pos = amp + 1;
  }
  return undefined;
}

function formDecode(s: string): string {
  if (s.indexOf("%") < 0 && s.indexOf("+") < 0) return s;
  const spaced = s.replaceAll("+", " ");
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}
