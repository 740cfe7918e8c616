/**
 * A literal redirect Location with nginx variables in it (RedirectAction.location), shared by both ends of
 * the model: translate checks the text with `parseLocationTemplate` (so the proxy never meets a variable it
 * cannot fill), and the proxy compiles it once and fills it per request with `fillLocation`. Filling is
 * plain substitution of a few request values, never evaluation: no other variable, no expression, and the
 * result is never read again as a template.
 */

/**
 * The variables Gatehouse fills, as nginx defines them (nginx.org/en/docs/http/ngx_http_core_module.html):
 * - `scheme`: `http` or `https`, the listener's;
 * - `host`: the request's host name, lower-case, without port;
 * - `http_host`: the Host the client used; here the host name with the listener's port unless it is the
 *   scheme's default (the client's own Host header is not echoed);
 * - `server_port`: the listener's port;
 * - `request_uri`: path and query (the path as routing saw it: escapes normalised, runs of `/` merged);
 * - `uri`: the path alone;
 * - `args`, `query_string`: the query without `?`; `is_args`: `?` when there is a query, else nothing.
 */
export const LOCATION_VARIABLES = [
  "scheme",
  "host",
  "http_host",
  "server_port",
  "request_uri",
  "uri",
  "args",
  "query_string",
  "is_args",
] as const;

/**
 * What forward authentication's templates may use besides (model `ExternalAuth`): `escaped_request_uri`
 * (the request URI with nginx's `set_escape_uri` escaping), and, in a cache key only, `remote_addr` (the
 * client's address), `request_method`, and a request header or cookie (`$http_authorization`,
 * `$cookie_session`: nginx's `http_` and `cookie_` families; `-` in a header name is written `_`).
 */
export const AUTH_VARIABLES = [...LOCATION_VARIABLES, "escaped_request_uri"] as const;
export const AUTH_CACHE_VARIABLES = [...AUTH_VARIABLES, "remote_addr", "request_method"] as const;
/** Name prefixes a cache key may use for a family of variables. */
export const AUTH_CACHE_FAMILIES = ["http_", "cookie_"] as const;

export type LocationVariable =
  | (typeof AUTH_CACHE_VARIABLES)[number]
  | `${(typeof AUTH_CACHE_FAMILIES)[number]}${string}`;

/**
 * The variables a request mirror's target path may use (MirrorTarget.path): the request's own URI and
 * host, not the listener's. `request_uri` is the path and query as routing saw them; `uri` the path as
 * sent upstream at the mirror's turn (nginx fills its mirror location's name there, useless in a copy).
 */
export const MIRROR_VARIABLES: readonly LocationVariable[] = [
  "request_uri",
  "uri",
  "args",
  "query_string",
  "is_args",
  "host",
];

/** Literal text, or a variable to fill. */
export type LocationPart = { readonly text: string } | { readonly variable: LocationVariable };

export type LocationParse =
  | { readonly ok: true; readonly parts: readonly LocationPart[] }
  | { readonly ok: false; readonly message: string };

/** `$name` or `${name}` (nginx's variable syntax) split out of `text`; an unknown or malformed one fails,
 * as does one not in `allowed`. */
export function parseLocationTemplate(
  text: string,
  allowed: readonly LocationVariable[] = LOCATION_VARIABLES,
  families: readonly string[] = [],
): LocationParse {
  const known: ReadonlySet<string> = new Set(allowed);
  const parts: LocationPart[] = [];
  let literal = "";
  let i = 0;
  while (i < text.length) {
    const dollar = text.indexOf("$", i);
    if (dollar < 0) {
      literal += text.slice(i);
      break;
    }
    literal += text.slice(i, dollar);
    const braced = text.charCodeAt(dollar + 1) === 123; // {
    const start = dollar + (braced ? 2 : 1);
    let end = start;
    while (end < text.length && /[A-Za-z0-9_]/.test(text.charAt(end))) end++;
    const name = text.slice(start, end);
    if (name === "") return { ok: false, message: `"$" at ${dollar} does not start a variable name` };
    if (braced) {
      if (text.charCodeAt(end) !== 125) return { ok: false, message: `"\${${name}" is not closed with "}"` };
      end++;
    }
    const family = families.find((f) => name.startsWith(f) && name.length > f.length);
    if (!known.has(name) && family === undefined)
      return {
        ok: false,
        message: `$${name} is not one of the variables Gatehouse fills (${[...allowed.map((v) => `$${v}`), ...families.map((f) => `$${f}<name>`)].join(", ")})`,
      };
    if (literal !== "") parts.push({ text: literal });
    literal = "";
    parts.push({ variable: name as LocationVariable });
    i = end;
  }
  if (literal !== "") parts.push({ text: literal });
  return { ok: true, parts };
}

/** The parts with each variable replaced by `value(variable)`. */
export function fillLocation(
  parts: readonly LocationPart[],
  value: (variable: LocationVariable) => string,
): string {
  let out = "";
  for (const p of parts) out += "text" in p ? p.text : value(p.variable);
  return out;
}
