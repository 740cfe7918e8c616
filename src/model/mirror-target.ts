/**
 * A request mirror's URL target (MirrorTarget) and Host, shared by both ends of the model as
 * location-template.ts is: translate reads ingress-nginx's `mirror-target` with `parseMirrorTarget` (so the
 * proxy never meets a target it cannot send to), and the proxy checks a model's target again with
 * `mirrorTargetProblem` before compiling its path. Only a literal `http`/`https` origin is taken (nginx
 * would need a resolver for variables there); the path may hold the variables of MIRROR_VARIABLES, filled
 * by plain substitution, never evaluated.
 */
import type { MirrorTarget } from "./filters.ts";
import { parseHostAndPort } from "./http-syntax.ts";
import { type LocationParse, MIRROR_VARIABLES, parseLocationTemplate } from "./location-template.ts";

/** `scheme://authority` and the rest; the authority ends at the first `/`, `?`, `#` or `$`. */
const URL_PARTS = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#$]*)(.*)$/;
/** RFC 3986 path and query characters (pchar, `/`, `?`, escapes); `$` starts a variable. */
const PATH_TEXT = /^[A-Za-z0-9\-._~!&'()*+,;=:@/?%]*$/;
/** How a path may begin: a literal `/`, or a variable that is a path itself. */
const PATH_START = /^(?:\/|\$request_uri\b|\$\{request_uri\}|\$uri\b|\$\{uri\})/;

export type MirrorTargetParse =
  | { readonly ok: true; readonly target: MirrorTarget }
  | { readonly ok: false; readonly message: string };

/** `http(s)://host[:port][path]`, e.g. ingress-nginx's `https://test.env.com$request_uri`. */
export function parseMirrorTarget(text: string): MirrorTargetParse {
  const m = URL_PARTS.exec(text.trim());
  if (m === null) return { ok: false, message: "is not an http:// or https:// URL" };
  const scheme = (m[1] as string).toLowerCase();
  if (scheme !== "http" && scheme !== "https")
    return { ok: false, message: `scheme ${scheme} is not http or https` };
  const authority = m[2] as string;
  const rest = m[3] as string;
  const host = parseHostAndPort(authority);
  if (host === undefined)
    return {
      ok: false,
      message:
        authority === "" && rest.startsWith("$")
          ? "the host must be written out (a variable is not filled there)"
          : `${JSON.stringify(authority)} is not a host with an optional port`,
    };
  const port = host.port === undefined ? (scheme === "https" ? 443 : 80) : Number(host.port);
  if (port < 1 || port > 65535) return { ok: false, message: `port ${host.port} is not within 1–65535` };
  const path = parseMirrorPath(rest);
  if (!path.ok) return path;
  return { ok: true, target: { scheme, hostname: host.host.toLowerCase(), port, path: rest } };
}

/** The parts of a target's path, checked: RFC 3986 characters, a `/` or path variable first. */
export function parseMirrorPath(path: string): LocationParse {
  if (path === "") return { ok: true, parts: [] };
  if (path.includes("#")) return { ok: false, message: "a fragment (#) is never sent" };
  if (!PATH_START.test(path))
    return { ok: false, message: "the path must start with / or $request_uri or $uri" };
  const parsed = parseLocationTemplate(path, MIRROR_VARIABLES);
  if (!parsed.ok) return parsed;
  for (const p of parsed.parts)
    if ("text" in p && !PATH_TEXT.test(p.text))
      return { ok: false, message: `${JSON.stringify(p.text)} has characters a URL path cannot hold` };
  return parsed;
}

/** Why a Host for mirrored copies cannot be sent (undefined: it can): a host with an optional port. */
export function mirrorHostProblem(host: string): string | undefined {
  const m = parseHostAndPort(host);
  if (m === undefined) return "is not a host name or address with an optional port";
  if (m.port !== undefined && (Number(m.port) < 1 || Number(m.port) > 65535))
    return `port ${m.port} is not within 1–65535`;
  return undefined;
}

/** Why a model's target cannot be sent to (undefined: it can); for models not made by translate. */
export function mirrorTargetProblem(t: MirrorTarget): string | undefined {
  if (t.scheme !== "http" && t.scheme !== "https") return `scheme ${String(t.scheme)} is not http or https`;
  const host = parseHostAndPort(t.hostname);
  if (host === undefined || host.port !== undefined)
    return `${JSON.stringify(t.hostname)} is not a host name`;
  if (!Number.isInteger(t.port) || t.port < 1 || t.port > 65535)
    return `port ${t.port} is not within 1–65535`;
  const path = parseMirrorPath(t.path);
  return path.ok ? undefined : path.message;
}
