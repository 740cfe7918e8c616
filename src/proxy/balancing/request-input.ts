/**
 * What a picker may read of a request, the same on both fronts (the raw front's parsed head and the
 * Bun.serve front's Request both answer it), and the hash key built from it.
 */
import type { HashKeyPart } from "../../model/index.ts";

export interface BalanceInput {
  /** A request header's value, repeated fields joined; `name` lower-case. */
  header(name: string): string | null;
  /** The routed path (normalised). */
  readonly path: string;
  /** `?…` as received, or "". */
  readonly query: string;
  /** The client's address, as the access log names it. */
  readonly clientIp: string;
  /** The listener is HTTPS (session cookies are then `Secure` unless configured). */
  readonly https: boolean;
}

/** The first cookie called `name` in a Cookie header (several joined by `; ` or `, `), or null. */
export function cookieValue(header: string | null, name: string): string | null {
  if (header === null) return null;
  let at = 0;
  while (at < header.length) {
    let end = header.indexOf(";", at);
    if (end < 0) end = header.length;
    // A field joined from repeated Cookie headers separates them with ", ".
    const comma = header.indexOf(", ", at);
    if (comma >= 0 && comma < end) end = comma;
    let from = at;
    while (header.charCodeAt(from) === 32) from++;
    const eq = header.indexOf("=", from);
    if (eq > 0 && eq < end && eq - from === name.length && header.startsWith(name, from))
      return header.slice(eq + 1, end).trim();
    at = end + 1;
  }
  return null;
}

/** The raw (undecoded, as nginx's `$arg_NAME`) value of the first query parameter `name`, or null. */
export function queryValue(query: string, name: string): string | null {
  let at = query.startsWith("?") ? 1 : 0;
  while (at < query.length) {
    let end = query.indexOf("&", at);
    if (end < 0) end = query.length;
    if (query.startsWith(name, at)) {
      const after = at + name.length;
      if (after === end) return "";
      if (query.charCodeAt(after) === 61) return query.slice(after + 1, end);
    }
    at = end + 1;
  }
  return null;
}

/**
 * The hash key: each part's value in order (a missing one adds nothing, as an unset nginx variable);
 * undefined when no request value is in it (literal text alone names no client: the caller balances
 * such requests round robin rather than send them all to one endpoint). Its length is bounded by what a
 * request head may hold, and the hash runs natively over it.
 */
export function hashKeyOf(parts: readonly HashKeyPart[], input: BalanceInput): string | undefined {
  let key = "";
  let valued = false;
  for (const p of parts) {
    const v = p.kind === "Text" ? p.value : partValue(p, input);
    if (v === null || v === "") continue;
    key += v;
    if (p.kind !== "Text") valued = true;
  }
  return valued ? key : undefined;
}

function partValue(p: HashKeyPart, input: BalanceInput): string | null {
  switch (p.kind) {
    case "Header":
      return input.header(p.name);
    case "Cookie":
      return cookieValue(input.header("cookie"), p.name);
    case "Query":
      return queryValue(input.query, p.name);
    case "ClientIP":
      return input.clientIp;
    case "RequestURI":
      return input.path + input.query;
    default:
      return null;
  }
}

/** The input of one request, from what either front has at hand (a Headers, or the raw head's lookup). */
export function balanceInput(
  headers: { get(name: string): string | null },
  path: string,
  query: string,
  clientIp: string,
  https: boolean,
): BalanceInput {
  return { header: (name) => headers.get(name), path, query, clientIp, https };
}
