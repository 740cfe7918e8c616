/**
 * `--access-log-format`: an nginx `log_format` template (`$remote_addr - $remote_user [$time_local] …`)
 * or the name of one (NAMED_LOG_FORMATS), parsed once at start into literal text and variables (variables.ts); each line is those parts joined,
 * with no regular expression or evaluation per request. Variables are `$name` or `${name}` (names of
 * letters, digits and `_`, case-insensitive, as nginx reads them); a `$` that starts no name, an unknown
 * or unfillable variable, or a control character in the template stops the start, naming it.
 *
 * Values are escaped as nginx's `escape=default` does: `"`, `\`, control characters and bytes from 0x7f
 * up become `\xHH`; an empty-but-set value is written empty and a missing one as `-`. With
 * `--access-log-escape json` (nginx's `escape=json`, ingress-nginx's `log-format-escape-json`), `"` and
 * `\` are backslash-escaped, control characters written as `\n`, `\t`, … or `\u00HH`, missing values
 * written empty; characters from 0x7f up become `\u00HH` too, so a line stays valid JSON for any bytes.
 */
import type { AccessRecord, LineFormat, RequestNeeds } from "./record.ts";
import { type LogVariable, logVariable } from "./variables.ts";

export type LogEscape = "default" | "json";

/**
 * Named formats `--access-log-format` takes instead of a template: ingress-nginx's default
 * `log-format-upstream` (its `log_format upstreaminfo`) and nginx's predefined `combined`.
 */
export const NAMED_LOG_FORMATS: Readonly<Record<string, string>> = {
  upstreaminfo:
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" ' +
    '"$http_user_agent" $request_length $request_time [$proxy_upstream_name] ' +
    "[$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length $upstream_response_time " +
    "$upstream_status $req_id",
  combined:
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" ' +
    '"$http_user_agent"',
};

type Part = string | LogVariable;

const HEX = "0123456789ABCDEF";

function isNameChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** The template's parts, or why it is refused. */
export function parseLogTemplate(template: string): readonly Part[] | { readonly error: string } {
  const text = Object.hasOwn(NAMED_LOG_FORMATS, template)
    ? (NAMED_LOG_FORMATS[template] as string)
    : template;
  const parts: Part[] = [];
  let literal = "";
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return { error: `control character at ${i}: one request is one line` };
    if (c !== 36) {
      literal += text[i];
      i++;
      continue;
    }
    const braced = text.charCodeAt(i + 1) === 123;
    const start = braced ? i + 2 : i + 1;
    let end = start;
    while (end < text.length && isNameChar(text.charCodeAt(end))) end++;
    if (end === start) return { error: `"$" at ${i} starts no variable name` };
    if (braced && text.charCodeAt(end) !== 125) return { error: `"\${" at ${i} has no closing "}"` };
    const name = text.slice(start, end).toLowerCase();
    const v = logVariable(name);
    if ("error" in v) return { error: v.error };
    if (literal !== "") parts.push(literal);
    literal = "";
    parts.push(v);
    i = braced ? end + 1 : end;
  }
  if (literal !== "") parts.push(literal);
  if (!parts.some((p) => typeof p !== "string")) return { error: "names no variable" };
  return parts;
}

/** A line format from a template parseLogTemplate accepted. */
export function templateLineFormat(parts: readonly Part[], escaping: LogEscape): LineFormat {
  const fields = new Set<string>();
  let readsRequest = false;
  let readsLength = false;
  for (const p of parts) {
    if (typeof p === "string") continue;
    if (p.field !== undefined) fields.add(p.field);
    if (p.request !== undefined) readsRequest = true;
    if (p.request === "length") readsLength = true;
  }
  const request: RequestNeeds | undefined =
    fields.size === 0 && !readsRequest ? undefined : { fields: [...fields], length: readsLength };
  const json = escaping === "json";
  const missing = json ? "" : "-";
  return {
    request,
    line(r: AccessRecord, now: number): string {
      let out = "";
      for (const p of parts) {
        if (typeof p === "string") out += p;
        else {
          const v = p.read(r, now);
          out += v === undefined ? missing : json ? escapeJson(v) : escapeDefault(v);
        }
      }
      return `${out}\n`;
    },
  };
}

/** nginx `escape=default`: `"`, `\`, controls and 0x7f and up as `\xHH` (a character past 0xff: its UTF-8 bytes). */
export function escapeDefault(v: string): string {
  let i = 0;
  while (i < v.length && !needsEscape(v.charCodeAt(i))) i++;
  if (i === v.length) return v;
  let out = v.slice(0, i);
  for (; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (!needsEscape(c)) out += v[i];
    else if (c <= 0xff) out += hexByte(c);
    else {
      const cp = v.codePointAt(i) as number;
      if (cp > 0xffff) i++;
      for (const b of Buffer.from(String.fromCodePoint(cp), "utf8")) out += hexByte(b);
    }
  }
  return out;
}

/** What both escapes change: controls, `"`, `\\` and 0x7f up. */
function needsEscape(c: number): boolean {
  return c < 0x20 || c === 0x22 || c === 0x5c || c >= 0x7f;
}

function hexByte(b: number): string {
  return `\\x${HEX[b >> 4]}${HEX[b & 15]}`;
}

const JSON_SHORT: Readonly<Record<number, string>> = {
  8: "\\b",
  9: "\\t",
  10: "\\n",
  12: "\\f",
  13: "\\r",
  34: '\\"',
  92: "\\\\",
};

/** nginx `escape=json`, with characters from 0x7f up as `\u00HH` (`\uHHHH` past 0xff). */
export function escapeJson(v: string): string {
  let i = 0;
  while (i < v.length && !needsEscape(v.charCodeAt(i))) i++;
  if (i === v.length) return v;
  let out = v.slice(0, i);
  for (; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (!needsEscape(c)) out += v[i];
    else out += JSON_SHORT[c] ?? `\\u${HEX[c >> 12]}${HEX[(c >> 8) & 15]}${HEX[(c >> 4) & 15]}${HEX[c & 15]}`;
  }
  return out;
}
