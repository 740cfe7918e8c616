/**
 * The model's ResponseRewriteFilter: nginx's proxy_redirect, proxy_cookie_domain and proxy_cookie_path
 * with plain text (ngx_http_proxy_module), as ingress-nginx writes them from its annotations.
 * - `Location`: a value starting with `from` gets `to` in place of that start. `Refresh`: the same for
 *   what follows the first `url=` (any case), as nginx's upstream module finds it.
 * - `Set-Cookie`: each line is split at `;` into parts trimmed of spaces; a cookie whose first part has
 *   no `=` is left alone. A `Domain` part equal to `from` (case-insensitively, one leading dot of the
 *   value ignored and kept) becomes `to`; a `Path` part starting with `from` gets `to` in its place. A
 *   cookie so changed is written back as nginx writes it: the trimmed parts joined with `; `.
 * Headers are only read unless one needs changing: the fields are scanned by index, and strings are
 * made for the lines that change.
 */
import type { ResponseRewriteFilter, ValueReplacement } from "../../model/index.ts";
import type { CompiledFilter } from "./filter-types.ts";

export function compileResponseRewrite(f: ResponseRewriteFilter): CompiledFilter {
  const { redirect, cookieDomain, cookiePath } = f;
  const cookies = cookieDomain !== undefined || cookiePath !== undefined;
  return {
    response: (_req, headers) => {
      if (redirect !== undefined) {
        const location = headers.get("location");
        if (location?.startsWith(redirect.from))
          headers.set("location", redirect.to + location.slice(redirect.from.length));
        const refresh = headers.get("refresh");
        if (refresh !== null) {
          const out = rewrittenRefresh(refresh, redirect);
          if (out !== undefined) headers.set("refresh", out);
        }
      }
      if (cookies && headers.has("set-cookie")) {
        const lines = headers.getSetCookie();
        let changed = false;
        for (let i = 0; i < lines.length; i++) {
          const out = rewrittenCookie(lines[i] as string, cookieDomain, cookiePath);
          if (out === undefined) continue;
          lines[i] = out;
          changed = true;
        }
        if (!changed) return;
        headers.delete("set-cookie");
        for (const line of lines) headers.append("set-cookie", line);
      }
    },
  };
}

/** `value` with the URL after its first `url=` rewritten, or undefined when nothing changes. */
export function rewrittenRefresh(value: string, r: ValueReplacement): string | undefined {
  const at = value.search(URL_IS);
  if (at < 0) return undefined;
  const start = at + 4;
  if (!value.startsWith(r.from, start)) return undefined;
  return value.slice(0, start) + r.to + value.slice(start + r.from.length);
}

const URL_IS = /url=/i;

/**
 * Per part of the cookie being looked at: name start, name end, value start, value end (value start -1:
 * the part has no `=`). Filled by `parseCookie`, reused across calls (they never interleave).
 */
const spans: number[] = [];

/** `line` with its Domain/Path parts rewritten, or undefined when none matches. */
export function rewrittenCookie(
  line: string,
  domain: ValueReplacement | undefined,
  path: ValueReplacement | undefined,
): string | undefined {
  const parts = parseCookie(line);
  if (parts < 2 || (spans[2] as number) < 0) return undefined;
  let replaced: Map<number, string> | undefined;
  for (let i = 1; i < parts; i++) {
    const o = i * 4;
    const ns = spans[o] as number;
    const ne = spans[o + 1] as number;
    const vs = spans[o + 2] as number;
    const ve = spans[o + 3] as number;
    if (vs < 0) continue;
    let out: string | undefined;
    if (domain !== undefined && ne - ns === 6 && equalsIgnoreCase(line, ns, ne, "domain"))
      out = rewrittenDomain(line, vs, ve, domain);
    else if (path !== undefined && ne - ns === 4 && equalsIgnoreCase(line, ns, ne, "path")) {
      if (ve - vs >= path.from.length && line.startsWith(path.from, vs))
        out = path.to + line.slice(vs + path.from.length, ve);
    }
    if (out === undefined) continue;
    replaced ??= new Map();
    replaced.set(i, out);
  }
  if (replaced === undefined) return undefined;
  let text = "";
  for (let i = 0; i < parts; i++) {
    const o = i * 4;
    if (i > 0) text += "; ";
    text += line.slice(spans[o], spans[o + 1]);
    const vs = spans[o + 2] as number;
    if (vs >= 0) text += `=${replaced.get(i) ?? line.slice(vs, spans[o + 3])}`;
  }
  return text;
}

/** The new Domain value, or undefined: the value (less one leading dot, kept) equals `from`. */
function rewrittenDomain(line: string, vs: number, ve: number, r: ValueReplacement): string | undefined {
  const dot = line.charCodeAt(vs) === 0x2e ? 1 : 0;
  if (ve - vs - dot !== r.from.length || !equalsIgnoreCase(line, vs + dot, ve, r.from)) return undefined;
  return (dot === 1 ? "." : "") + r.to;
}

/** Splits `line` at `;` into `spans` as nginx does (spaces trimmed around names and values); the count. */
function parseCookie(line: string): number {
  let n = 0;
  let start = 0;
  const end = line.length;
  for (;;) {
    let last = line.indexOf(";", start);
    if (last < 0) last = end;
    while (start < last && line.charCodeAt(start) === 0x20) start++;
    let p = start;
    while (p < last && line.charCodeAt(p) !== 0x3d) p++;
    let ne = p;
    while (ne > start && line.charCodeAt(ne - 1) === 0x20) ne--;
    let vs = -1;
    let ve = -1;
    if (p < last) {
      vs = p + 1;
      while (vs < last && line.charCodeAt(vs) === 0x20) vs++;
      ve = last;
      while (ve > vs && line.charCodeAt(ve - 1) === 0x20) ve--;
    }
    const o = n * 4;
    spans[o] = start;
    spans[o + 1] = ne;
    spans[o + 2] = vs;
    spans[o + 3] = ve;
    n++;
    if (last === end) return n;
    start = last + 1;
  }
}

/** `s[from, to)` equals `word` in ASCII case-insensitive comparison (as nginx's strncasecmp). */
function equalsIgnoreCase(s: string, from: number, to: number, word: string): boolean {
  if (to - from !== word.length) return false;
  for (let i = 0; i < word.length; i++) {
    let a = s.charCodeAt(from + i);
    let b = word.charCodeAt(i);
    if (a >= 0x41 && a <= 0x5a) a += 0x20;
    if (b >= 0x41 && b <= 0x5a) b += 0x20;
    if (a !== b) return false;
  }
  return true;
}
