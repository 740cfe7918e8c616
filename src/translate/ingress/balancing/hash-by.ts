/**
 * ingress-nginx `upstream-hash-by` (nginx's `hash <key> consistent`, through its Lua chash balancer): the
 * key is text with nginx variables in it. The variables a request key is made of are read:
 * `$request_uri`, `$remote_addr`, `$http_NAME` (a header; `_` in NAME is `-`), `$cookie_NAME`,
 * `$arg_NAME`, each also as `${name}`, with any literal text around them. Any other variable is refused
 * by name, never hashed as its own text (which would send every request to one endpoint).
 */
import type { HashKeyPart } from "../../../model/index.ts";

/** The key's parts, or why it cannot be read. */
export function parseHashBy(text: string): { ok: true; parts: HashKeyPart[] } | { ok: false; why: string } {
  const parts: HashKeyPart[] = [];
  let literal = "";
  const flush = () => {
    if (literal !== "") parts.push({ kind: "Text", value: literal });
    literal = "";
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch !== "$") {
      literal += ch;
      i++;
      continue;
    }
    let name: string;
    if (text[i + 1] === "{") {
      const close = text.indexOf("}", i + 2);
      if (close < 0) return { ok: false, why: `"\${" at ${i} is not closed` };
      name = text.slice(i + 2, close);
      i = close + 1;
    } else {
      const m = /^[A-Za-z0-9_]+/.exec(text.slice(i + 1));
      name = m?.[0] ?? "";
      i += 1 + name.length;
    }
    if (!/^[A-Za-z0-9_]+$/.test(name))
      return { ok: false, why: `"$" at ${i - name.length - 1} names no variable` };
    const part = variablePart(name);
    if (part === undefined)
      return {
        ok: false,
        why: `variable $${name} is not one Gatehouse hashes on ($request_uri, $remote_addr, $http_NAME, $cookie_NAME, $arg_NAME)`,
      };
    flush();
    parts.push(part);
  }
  flush();
  if (!parts.some((p) => p.kind !== "Text"))
    return { ok: false, why: "names no request variable: every request would hash alike" };
  return { ok: true, parts };
}

function variablePart(name: string): HashKeyPart | undefined {
  if (name === "request_uri") return { kind: "RequestURI" };
  if (name === "remote_addr") return { kind: "ClientIP" };
  const m = /^(http|cookie|arg)_(.+)$/.exec(name);
  if (m === null) return undefined;
  const rest = m[2] as string;
  if (m[1] === "http") return { kind: "Header", name: rest.toLowerCase().replaceAll("_", "-") };
  if (m[1] === "cookie") return { kind: "Cookie", name: rest };
  return { kind: "Query", name: rest };
}
