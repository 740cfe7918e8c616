/**
 * The request's host as routing sees it, and the virtual host it selects. Lookup order follows the
 * model: exact name, then the longest wildcard suffix, then the catch-all; the first hit is final.
 */
import type { CompiledVirtualHost, VirtualHostIndex } from "../table.ts";

/**
 * `Host` header → lower-case name without port or trailing dot; `[v6]` keeps its brackets. Anything
 * that is not a DNS name, IPv4 or bracketed IPv6 (including several Host headers joined by Bun with
 * ", ") gives "", which only the catch-all virtual host serves. Returns the input itself when it is
 * already normal, so the common case allocates nothing.
 */
export function normaliseHost(raw: string | null): string {
  if (!raw) return "";
  if (raw.charCodeAt(0) === 91) return normaliseIPv6(raw);
  let end = raw.length;
  let upper = false;
  let prev = 46; // a leading "." counts as an empty label
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 58) {
      if (!isPort(raw, i + 1)) return "";
      end = i;
      break;
    }
    if (c >= 65 && c <= 90) upper = true;
    else if (c === 46) {
      if (prev === 46) return "";
    } else if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 95)) return "";
    prev = c;
  }
  if (end === 0) return "";
  if (prev === 46) end--; // one trailing dot: `foo.com.` is `foo.com`
  if (end <= 0) return "";
  const host = end === raw.length ? raw : raw.slice(0, end);
  return upper ? host.toLowerCase() : host;
}

function normaliseIPv6(raw: string): string {
  const close = raw.indexOf("]");
  if (close < 3) return "";
  for (let i = 1; i < close; i++) {
    const c = raw.charCodeAt(i);
    const ok = (c >= 48 && c <= 58) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70) || c === 46;
    if (!ok) return "";
  }
  if (close + 1 < raw.length && (raw.charCodeAt(close + 1) !== 58 || !isPort(raw, close + 2))) return "";
  return raw.slice(0, close + 1).toLowerCase();
}

function isPort(s: string, from: number): boolean {
  if (from >= s.length || s.length - from > 5) return false;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** The virtual host serving `host` (already normalised), or undefined when none does. */
export function findVirtualHost(index: VirtualHostIndex, host: string): CompiledVirtualHost | undefined {
  if (host !== "") {
    const exact = index.exact.get(host);
    if (exact !== undefined) return exact;
    let dot = host.indexOf(".");
    if (dot > 0 && (index.oneLabel.size > 0 || index.anyLabels.size > 0)) {
      // Left to right means longest suffix first. Only the first suffix is "one label" away.
      const first = host.slice(dot + 1);
      const hit = index.oneLabel.get(first) ?? index.anyLabels.get(first);
      if (hit !== undefined) return hit;
      if (index.anyLabels.size > 0) {
        for (dot = host.indexOf(".", dot + 1); dot >= 0; dot = host.indexOf(".", dot + 1)) {
          const v = index.anyLabels.get(host.slice(dot + 1));
          if (v !== undefined) return v;
        }
      }
    }
  }
  return index.any;
}
