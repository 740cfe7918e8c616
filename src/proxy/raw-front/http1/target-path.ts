/**
 * The request-target of a raw request → the path and query routing sees. Bun.serve resolves `.` and `..`
 * segments before `parseRequestTarget` (src/proxy/request/request-target.ts) runs; here we do that step
 * ourselves (RFC 3986 §5.2.4), then hand over to the same function so both fronts refuse the same
 * targets (encoded `/`, `\`, NUL, bad escapes, fragments). Absolute-form (`http://h/p`) keeps only its
 * path: routing uses the Host header, as with Bun.serve. Asterisk- and authority-form are refused.
 */
import { parseRequestTarget, type RequestTarget } from "../../request/request-target.ts";

export function routingTarget(raw: string): RequestTarget | undefined {
  let t = hasHighBytes(raw) ? encodeHighBytes(raw) : raw;
  if (t.charCodeAt(0) !== 47) {
    const lower = t.slice(0, 8).toLowerCase();
    const skip = lower.startsWith("http://") ? 7 : lower.startsWith("https://") ? 8 : -1;
    if (skip < 0) return undefined;
    const slash = t.indexOf("/", skip);
    const q = t.indexOf("?", skip);
    if (slash < 0 || (q >= 0 && q < slash)) t = q < 0 ? "/" : `/${t.slice(q)}`;
    else t = t.slice(slash);
  }
  const q = t.indexOf("?");
  let path = q < 0 ? t : t.slice(0, q);
  // Bun.serve turns a raw `\` into `/` and resolves dot segments, raw or `%2e`-encoded, before routing.
  if (path.indexOf("\\") >= 0) path = path.replaceAll("\\", "/");
  if (path.indexOf("/.") >= 0 || path.indexOf("%2") >= 0) {
    // A fragment is refused before dot segments are resolved: `/x#/../../admin` would otherwise lose its
    // `#` with the segment it sits in and be routed to /admin (the Bun front answers it 400). Anywhere
    // else parseRequestTarget refuses it, so the common target is scanned for `#` once.
    if (path.indexOf("#") >= 0) return undefined;
    path = removeDotSegments(path);
  }
  return parseRequestTarget(q < 0 ? path : path + t.slice(q));
}

function hasHighBytes(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7e) return true;
  return false;
}

/** Raw bytes ≥ 0x80 (a latin1-decoded target) → `%XX`, as Bun.serve does before routing. */
function encodeHighBytes(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += c > 0x7e ? `%${c.toString(16).toUpperCase().padStart(2, "0")}` : s[i];
  }
  return out;
}

/** 1 for a `.` segment, 2 for `..` (either dot may be written `%2e`), else 0. */
function dots(s: string): number {
  if (s.length === 0 || s.length > 6) return 0;
  const l = s.toLowerCase();
  if (l === "." || l === "%2e") return 1;
  if (l === ".." || l === ".%2e" || l === "%2e." || l === "%2e%2e") return 2;
  return 0;
}

/** `/a/./b/../c` → `/a/c`; never climbs above `/`. `path` starts with `/` and has no query. */
export function removeDotSegments(path: string): string {
  const segs = path.split("/");
  const out: string[] = [];
  const last = segs.length - 1;
  for (let i = 1; i <= last; i++) {
    const s = segs[i] as string;
    const d = dots(s);
    if (d === 2) out.pop();
    if (d > 0) {
      if (i === last) out.push("");
      continue;
    }
    out.push(s);
  }
  return `/${out.join("/")}`;
}
