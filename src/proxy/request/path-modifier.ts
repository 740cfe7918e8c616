/**
 * Path replacement shared by redirects and URL rewrites, with the Gateway API HTTPPathModifier
 * semantics: `ReplacePrefixMatch` swaps the matched prefix element-wise and never doubles or loses the
 * `/` between the new prefix and the rest (`/foo` + `/xyz/` on `/foo/bar` → `/xyz/bar`; `/foo` + `/` on
 * `/foo` → `/`).
 */
import type { PathModifier } from "../../model/index.ts";
import type { CompiledPathModifier } from "../table.ts";

export function compilePathModifier(m: PathModifier): CompiledPathModifier {
  return { full: m.type === "ReplaceFullPath", value: m.value };
}

/**
 * @param prefix the route's matched prefix without trailing slash ("" for `/`); ignored for full paths.
 */
export function modifyPath(path: string, prefix: string, m: CompiledPathModifier): string {
  if (m.full) return m.value === "" ? "/" : m.value;
  const rest = path.slice(prefix.length);
  const v = m.value;
  const out = v.charCodeAt(v.length - 1) === 47 && rest.charCodeAt(0) === 47 ? v + rest.slice(1) : v + rest;
  return out === "" ? "/" : out;
}
