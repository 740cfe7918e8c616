/**
 * Path and query of a request, taken from Bun's `req.url` without `new URL()` (a measured per-request
 * cost). Bun has already resolved `.`/`..` segments (raw and `%2e`), turned raw `\` into `/`, and taken
 * an absolute-form target's path while keeping the Host header as the authority — so the URL's host is
 * never routed on. What is left to refuse here is what would let the path we match differ from the path
 * an upstream acts on: encoded `/`, `\` and NUL, malformed escapes, and fragments. Runs of `/` are
 * merged (nginx's `merge_slashes`): Bun's fetch sends `//admin` upstream as `/admin`, so a path must be
 * matched as it will be forwarded, or `//admin` would slip past an `Exact /admin` route to reach it.
 * A target with U+FFFD in it (`%EF%BF%BD`) is refused too: it is what Bun.serve makes of target bytes
 * that are not UTF-8, which cannot be told apart from it here; the raw front refuses those bytes
 * themselves (raw-front/http1/target-path.ts), so the same bytes are refused on both fronts.
 */

/** Path (never empty, starts with `/`) and query (`""` or starting with `?`). */
export interface RequestTarget {
  readonly path: string;
  readonly query: string;
}

/** Splits `req.url`; undefined means "answer 400". */
export function parseRequestTarget(url: string): RequestTarget | undefined {
  let start = 0;
  // Bun gives an absolute URL when the Host is valid, and a bare path otherwise.
  if (url.charCodeAt(0) !== 47) {
    const scheme = url.indexOf("://");
    if (scheme < 0) return undefined;
    start = url.indexOf("/", scheme + 3);
    if (start < 0) return { path: "/", query: "" };
  }
  if (url.indexOf("#", start) >= 0) return undefined;
  if (hasEncodedReplacement(url, start)) return undefined;
  const q = url.indexOf("?", start);
  let path = q < 0 ? (start === 0 ? url : url.slice(start)) : url.slice(start, q);
  const query = q < 0 ? "" : url.slice(q);
  if (path.indexOf("\\") >= 0) return undefined;
  if (path.indexOf("%") >= 0) {
    const decoded = normaliseEscapes(path);
    if (decoded === undefined) return undefined;
    path = decoded;
  }
  if (path.indexOf("//") >= 0) path = path.replace(/\/{2,}/g, "/");
  return { path, query };
}

/**
 * RFC 3986 §6.2.2 normalisation of percent-escapes: unreserved characters are decoded (so `/%61dmin`
 * matches a route for `/admin` instead of slipping past it while the upstream decodes it to `/admin`),
 * other escapes get upper-case hex. Encoded `/`, `\`, NUL and malformed escapes are refused, and so is
 * any `.`/`..` segment that decoding would create.
 */
export function normaliseEscapes(path: string): string | undefined {
  let out = "";
  let from = 0;
  let decodedDot = false;
  for (let i = path.indexOf("%"); i >= 0; i = path.indexOf("%", i + 1)) {
    const hi = hexValue(path.charCodeAt(i + 1));
    const lo = hexValue(path.charCodeAt(i + 2));
    if (hi < 0 || lo < 0) return undefined;
    const byte = hi * 16 + lo;
    if (byte === 0x2f || byte === 0x5c || byte === 0) return undefined;
    out += path.slice(from, i);
    if (isUnreserved(byte)) {
      out += String.fromCharCode(byte);
      if (byte === 0x2e) decodedDot = true;
    } else {
      out += `%${HEX[hi]}${HEX[lo]}`;
    }
    from = i + 3;
    i += 2;
  }
  out += path.slice(from);
  if (decodedDot && hasDotSegment(out)) return undefined;
  return out;
}

const HEX = "0123456789ABCDEF";

/** `%EF%BF%BD` (hex in either case) in `s` from `from` on: U+FFFD percent-encoded as UTF-8. */
function hasEncodedReplacement(s: string, from: number): boolean {
  for (let i = s.indexOf("%", from); i >= 0 && i + 9 <= s.length; i = s.indexOf("%", i + 1)) {
    if (s.charCodeAt(i + 3) === 37 && s.charCodeAt(i + 6) === 37 && s.slice(i, i + 9).toUpperCase() === FFFD)
      return true;
  }
  return false;
}
const FFFD = "%EF%BF%BD";

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

function isUnreserved(b: number): boolean {
  return (
    (b >= 0x41 && b <= 0x5a) ||
    (b >= 0x61 && b <= 0x7a) ||
    (b >= 0x30 && b <= 0x39) ||
    b === 0x2d ||
    b === 0x2e ||
    b === 0x5f ||
    b === 0x7e
  );
}

function hasDotSegment(path: string): boolean {
  for (const seg of path.split("/")) if (seg === "." || seg === "..") return true;
  return false;
}
