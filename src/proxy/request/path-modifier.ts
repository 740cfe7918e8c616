/**
 * Path replacement shared by redirects and URL rewrites, with the Gateway API HTTPPathModifier
 * semantics: `ReplacePrefixMatch` swaps the matched prefix element-wise and never doubles or loses the
 * `/` between the new prefix and the rest (`/foo` + `/xyz/` on `/foo/bar` → `/xyz/bar`; `/foo` + `/` on
 * `/foo` → `/`).
 */
import type { PathModifier } from "../../model/index.ts";
import { type CaptureRegex, compileRegex } from "../match/regex/regex.ts";
import { type CompiledPathModifier, type CompiledRoute, PATH_REGEX } from "../table.ts";

/** What a refused RegexSubstitute pattern runs: it takes no path, so the path is kept. */
const NO_MATCH: CaptureRegex = {
  test: () => false,
  exec: () => null,
  groupCount: 0,
  groupNames: [],
};

export function compilePathModifier(m: PathModifier): CompiledPathModifier {
  if (m.type === "RegexSubstitute") {
    // The translator checked the pattern with this engine; one it refuses (a hand-made model) leaves the
    // path as it is, never falls through to the prefix replacement below.
    const regex = compileRegex(m.pattern ?? "", { ignoreCase: m.ignoreCase === true }).regex ?? NO_MATCH;
    return { full: false, value: m.value, regex };
  }
  return { full: m.type === "ReplaceFullPath", value: m.value };
}

/** The prefix a ReplacePrefixMatch replaces: the route's normalised prefix (or exact path). */
export function matchedPrefix(route: CompiledRoute): string {
  return route.pathType === PATH_REGEX ? "" : route.pathValue;
}

/**
 * @param prefix the route's matched prefix without trailing slash ("" for `/`); ignored for full paths.
 */
export function modifyPath(path: string, prefix: string, m: CompiledPathModifier): string {
  if (m.full) return m.value === "" ? "/" : m.value;
  if (m.regex !== undefined) return substitute(path, m.regex, m.value);
  const rest = path.slice(prefix.length);
  const v = m.value;
  const out = v.charCodeAt(v.length - 1) === 47 && rest.charCodeAt(0) === 47 ? v + rest.slice(1) : v + rest;
  return out === "" ? "/" : out;
}

/**
 * nginx's `rewrite "(?i)<path>" <target>` as ingress-nginx writes it: the whole path becomes `target` with
 * `$1`…`$9` replaced by the groups (a group that took no part is empty); a result that lost its leading
 * `/` gets one back, since a request target must start with it.
 */
function substitute(path: string, regex: CaptureRegex, target: string): string {
  const groups = regex.exec(path);
  if (groups === null) return path;
  const out = target.replace(/\$([1-9])/g, (_, d: string) => groups[Number(d)] ?? "");
  return out.charCodeAt(0) === 47 ? out : `/${out}`;
}
