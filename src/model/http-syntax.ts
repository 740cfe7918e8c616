/**
 * RFC 9110 syntax shared by both ends of the model: translate checks the header names, values and Hosts
 * it puts into the model with it (so the proxy never meets a field it cannot send), and the raw front's
 * parsers read heads with it. Lookup tables, no regexes per request.
 */

/**
 * The largest response head taken from an upstream (status line and fields), on both fronts; a larger
 * one is an unreadable answer (502). nginx's default `proxy_buffer_size` is 4–8 KB; Envoy's
 * `max_response_headers_kb` 60 KB.
 */
export const MAX_RESPONSE_HEAD_BYTES = 64 * 1024;

/**
 * Request head limits, the same on both fronts (`--max-request-header-bytes`, `--max-request-header-count`):
 * a head (request line, fields, blank line) over `bytes`, or with more than `fields` field lines, is
 * answered 431 (Envoy's `max_request_headers_kb` 60 and `max_headers_count` 100; nginx answers 400 past
 * `large_client_header_buffers` 4 × 8 KB). A request line over `MAX_REQUEST_LINE` is 414, as nginx.
 */
export interface RequestHeadLimits {
  readonly bytes: number;
  readonly fields: number;
}

export const DEFAULT_REQUEST_HEAD_LIMITS: RequestHeadLimits = { bytes: 64 * 1024, fields: 100 };
export const MAX_REQUEST_LINE = 8 * 1024;
/** Bun.serve answers 431 past 198 field lines whatever it is told (Bun 1.4, measured): the highest count. */
export const MAX_REQUEST_HEADER_FIELDS = 198;

/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1): the proxy removes them in both
 * directions (proxy/request/hop-by-hop.ts), and translate refuses to set them.
 */
export const HOP_BY_HOP: readonly string[] = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

/** ingress-nginx's header name pattern (customheaders/main.go `headerRegexp`): narrower than a token. */
const CUSTOM_HEADER_NAME = /^[A-Za-z0-9_-]+$/;
/** They frame or steer the connection: the gateway writes them itself. */
const MESSAGE_FRAMING = new Set([...HOP_BY_HOP, "content-length"]);

/**
 * Why `name` cannot be a response header an Ingress's `custom-headers` ConfigMap sets, or undefined: the
 * check of each ConfigMap entry and of `--global-allowed-response-headers` (ingress-nginx drops a bad name
 * of its allowed list with a log line; the flag refuses it at start instead).
 */
export function customHeaderNameProblem(name: string): string | undefined {
  if (!CUSTOM_HEADER_NAME.test(name))
    return `${JSON.stringify(name)} is not a header name (letters, digits, - and _)`;
  if (MESSAGE_FRAMING.has(name.toLowerCase()))
    return `${JSON.stringify(name)} frames the message (hop-by-hop or Content-Length): the gateway sets it`;
  return undefined;
}

const TCHAR = new Uint8Array(256);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z0-9!#$%&'*+\-.^_`|~]/.test(ch)) TCHAR[c] = 1;
}

/** RFC 9110 §5.6.2 `tchar`: the characters of a method, header name or other token. */
export function isTchar(c: number): boolean {
  return TCHAR[c] === 1;
}

/** A non-empty string of tchar: a method, a field name, a transfer coding. */
export function isToken(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isTchar(s.charCodeAt(i))) return false;
  return s.length > 0;
}

/** Names of the control characters a message names rather than prints. */
const CONTROL_NAMES: Readonly<Record<number, string>> = { 0: "NUL", 10: "LF", 13: "CR", 127: "DEL" };

/**
 * Why `value` cannot be sent as a field value (RFC 9110 §5.5), or undefined when it can. Refused: a
 * control character other than HTAB (NUL, CR and LF make Bun's Headers throw; the others and DEL Bun
 * sends, but Bun's own server answers 400 and its fetch calls the response malformed), and a character
 * above U+00FF (Headers throws: a field is bytes, and Gatehouse sends U+0080–U+00FF as one byte each,
 * Latin-1, on both fronts). Leading and trailing whitespace is not refused: it is not part of the value
 * (§5.5), and Headers strips it.
 */
export function fieldValueProblem(value: string): string | undefined {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) {
      const code = `U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
      const name = CONTROL_NAMES[c];
      return `contains the control character ${name ? `${name} (${code})` : code}; a header value may hold no control character but tab`;
    }
    if (c > 0xff) {
      const cp = value.codePointAt(i) as number;
      const code = `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
      return `contains ${code}; a header value is bytes, and Gatehouse sends only characters up to U+00FF (one byte each, Latin-1)`;
    }
  }
  return undefined;
}

/**
 * A host name, IPv4 or bracketed IPv6 address; group 2 an optional port. A label is runs of
 * letters, digits and `_` joined by runs of `-`: unambiguous, so a failed match backtracks linearly.
 */
const HOST_AND_PORT =
  /^((?:[A-Za-z0-9_]+(?:-+[A-Za-z0-9_]+)*(?:\.[A-Za-z0-9_]+(?:-+[A-Za-z0-9_]+)*)*\.?|\[[0-9A-Fa-f:.]+\]))(?::([0-9]{1,5}))?$/;
/** A DNS name's 253 characters, `[`…`]` and a port: longer is no host (and is not run through HOST_AND_PORT). */
const MAX_HOST_AND_PORT = 253 + 2 + 6;

/**
 * `host[:port]` as a Host field or URL authority holds it (RFC 9110 §7.2 without userinfo), split; undefined
 * when it is not one. The port is 1–5 digits, not checked against 65535: each caller words that itself.
 */
export function parseHostAndPort(
  text: string,
): { readonly host: string; readonly port: string | undefined } | undefined {
  const m = text.length > MAX_HOST_AND_PORT ? null : HOST_AND_PORT.exec(text);
  return m === null ? undefined : { host: m[1] as string, port: m[2] };
}
