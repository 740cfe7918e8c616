/**
 * The content coding a response gets, from the request's Accept-Encoding (RFC 9110 §12.5.3): each
 * offered coding weighs what the client gave it (its own entry, else `*`'s, else nothing), the heaviest
 * above 0 wins and a tie goes to the gateway's order. `identity` listed heavier than that coding keeps
 * the body as it is; `identity;q=0` forbids nothing here (there is no coding to fall back on: the body
 * goes uncompressed, as nginx sends it, rather than a 406). No Accept-Encoding, or an empty one: none.
 * One pass over the value, no regular expression; an element that cannot be read is skipped.
 */
import type { ContentCoding } from "../../model/index.ts";

/** The coding of `offered` (most preferred first) the client accepts most, or undefined. */
export function chooseCoding(
  acceptEncoding: string | null,
  offered: readonly ContentCoding[],
): ContentCoding | undefined {
  if (acceptEncoding === null || acceptEncoding === "") return undefined;
  // Weights in thousandths (q has at most three decimals); -1: not listed.
  let star = -1;
  let identity = -1;
  const listed = [-1, -1, -1];
  let i = 0;
  const n = acceptEncoding.length;
  while (i < n) {
    let end = acceptEncoding.indexOf(",", i);
    if (end < 0) end = n;
    const element = acceptEncoding.slice(i, end);
    i = end + 1;
    const semi = element.indexOf(";");
    const name = (semi < 0 ? element : element.slice(0, semi)).trim().toLowerCase();
    if (name === "") continue;
    const q = semi < 0 ? 1000 : weightOf(element.slice(semi + 1));
    if (q < 0) continue;
    if (name === "*") star = Math.max(star, q);
    else if (name === "identity") identity = Math.max(identity, q);
    else {
      const k = codingIndex(name, offered);
      if (k >= 0) listed[k] = Math.max(listed[k] as number, q);
    }
  }
  let best: ContentCoding | undefined;
  let bestQ = 0;
  for (let k = 0; k < offered.length; k++) {
    const own = listed[k] as number;
    const q = own >= 0 ? own : star;
    if (q > bestQ) {
      bestQ = q;
      best = offered[k];
    }
  }
  return best !== undefined && identity > bestQ ? undefined : best;
}

/** Index in `offered` of the coding named `name` (`x-gzip` is gzip, RFC 9110 §8.4.1.3), or -1. */
function codingIndex(name: string, offered: readonly ContentCoding[]): number {
  const coding = name === "x-gzip" ? "gzip" : name;
  for (let k = 0; k < offered.length; k++) if (offered[k] === coding) return k;
  return -1;
}

/**
 * The weight in thousandths from an element's parameters (`q=0.5` → 500; no q: 1000), or -1 when the
 * q is not a qvalue (`0`, `0.x{0,3}`, `1`, `1.0{0,3}`): such an element is ignored.
 */
function weightOf(params: string): number {
  for (const p of params.split(";")) {
    const eq = p.indexOf("=");
    if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== "q") continue;
    const v = p.slice(eq + 1).trim();
    if (v.length === 0 || v.length > 5 || (v[0] !== "0" && v[0] !== "1")) return -1;
    if (v.length > 1 && v[1] !== ".") return -1;
    let thousandths = 0;
    for (let d = 2; d < 5; d++) {
      const c = d < v.length ? v.charCodeAt(d) - 48 : 0;
      if (c < 0 || c > 9) return -1;
      thousandths = thousandths * 10 + c;
    }
    const q = (v[0] === "1" ? 1000 : 0) + thousandths;
    return q > 1000 ? -1 : q;
  }
  return 1000;
}
