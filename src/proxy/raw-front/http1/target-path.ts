/**
 * The request-target of a raw request → the path and query routing sees. Bun.serve resolves `.` and `..`
 * segments before `parseRequestTarget` (src/proxy/request/request-target.ts) runs; here we do that step
 * ourselves (RFC 3986 §5.2.4), then hand over to the same function so both fronts refuse the same
 * targets (encoded `/`, `\`, NUL, bad escapes, fragments). An absolute-form target (`http://h/p`) reaches
 * here as its origin-form: the parser (request-head.ts, `absoluteForm`) made its authority the request's
 * host, as RFC 9112 §3.2.2 asks and nginx does. Asterisk- and authority-form are refused.
 * Raw bytes above 0x7e are refused unless they are UTF-8 (RFC 9112 §3.2 has the target ASCII): Bun.serve
 * reads the target as UTF-8 and forwards each byte that is not as U+FFFD, nginx passes it on as it is and
 * a backend may read it as Latin-1, so no one path could be the one every reader acts on. UTF-8 is
 * percent-encoded as Bun.serve does, and U+FFFD itself is refused on both fronts (request-target.ts).
 */
import { parseRequestTarget, type RequestTarget } from "../../request/request-target.ts";

export function routingTarget(raw: string): RequestTarget | undefined {
  let t = raw;
  if (hasHighBytes(raw)) {
    if (!isUtf8(raw)) return undefined;
    t = encodeHighBytes(raw);
  }
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

/** An absolute-form target split: its authority (the host routing uses) and its origin-form. */
export interface AbsoluteForm {
  readonly authority: string;
  readonly originForm: string;
}

/** host[:port], a reg-name or an IPv4 / bracketed IPv6 literal; no userinfo. */
const AUTHORITY = /^(?:[A-Za-z0-9._~!$&'()*+,;=-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * `http://authority/path?query` (or https) → its authority and `/path?query`; null for any other form (the
 * target is routed as it is); undefined for an absolute-form whose authority is empty, carries userinfo
 * or is malformed (answer 400: two parsers could read such an authority differently).
 */
export function absoluteForm(target: string): AbsoluteForm | null | undefined {
  const lower = target.slice(0, 8).toLowerCase();
  const skip = lower.startsWith("http://") ? 7 : lower.startsWith("https://") ? 8 : -1;
  if (skip < 0) return null;
  let end = target.length;
  for (let i = skip; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c === 47 || c === 63 || c === 35) {
      end = i;
      break;
    }
  }
  const authority = target.slice(skip, end);
  if (!AUTHORITY.test(authority)) return undefined;
  const rest = target.slice(end);
  return { authority, originForm: rest.charCodeAt(0) === 47 ? rest : `/${rest}` };
}

function hasHighBytes(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7e) return true;
  return false;
}

/**
 * Whether the bytes of `s` (a latin1-decoded target: one character a byte) are well-formed UTF-8 (RFC
 * 3629: no overlong forms, surrogates or code points above U+10FFFF): exactly the bytes Bun.serve's
 * decoder turns into no U+FFFD.
 */
export function isUtf8(s: string): boolean {
  for (let i = 0; i < s.length; ) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      i++;
      continue;
    }
    // The sequence's length, and the range its second byte must be in (the others: 0x80–0xbf).
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 3;
      if (c === 0xe0) lo = 0xa0;
      else if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 4;
      if (c === 0xf0) lo = 0x90;
      else if (c === 0xf4) hi = 0x8f;
    } else return false;
    if (i + n > s.length) return false;
    const second = s.charCodeAt(i + 1);
    if (second < lo || second > hi) return false;
    for (let k = 2; k < n; k++) {
      const b = s.charCodeAt(i + k);
      if (b < 0x80 || b > 0xbf) return false;
    }
    i += n;
  }
  return true;
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
