/** Finding the bearer token in a request, from the configured sources in order. */
import type { TokenSource } from "../model/index.ts";

/** The first configured source present in the request, or undefined. Only that source is read. */
/** What tokens are read from: a `Headers`, or the raw-socket front's view of a parsed request head. */
export interface HeaderReader {
  get(name: string): string | null;
}

export function extractToken(
  sources: readonly TokenSource[],
  headers: HeaderReader,
  query: string,
): string | undefined {
  for (const s of sources) {
    if (s.type === "Header") {
      const value = headers.get(s.name);
      if (value === null) continue;
      if (s.prefix === "") return value.trim() || undefined;
      // Scheme names are case-insensitive (RFC 9110 §11.1); "Basic …" is not a bearer token.
      if (
        value.length <= s.prefix.length ||
        value.slice(0, s.prefix.length).toLowerCase() !== s.prefix.toLowerCase()
      )
        continue;
      return value.slice(s.prefix.length).trim() || undefined;
    } else if (s.type === "Cookie") {
      const value = cookieValue(headers.get("cookie"), s.name);
      if (value) return value;
    } else if (query !== "") {
      const value = new URLSearchParams(query).get(s.name);
      if (value) return value;
    }
  }
  return undefined;
}

/** One cookie's value from a `Cookie` header (RFC 6265 §5.4 pairs), or undefined. */
export function cookieValue(header: string | null, name: string): string | undefined {
  if (header === null) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    return raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2 ? raw.slice(1, -1) : raw;
  }
  return undefined;
}
