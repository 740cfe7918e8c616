/**
 * Location header of a redirect route (Gateway API RequestRedirect). Port rules from the spec: an
 * explicit port wins; otherwise a redirect that names a scheme goes to that scheme's well-known port,
 * and one that does not keeps the listener's port (the model's, never a remapped bound port). The port
 * is left out when it is the scheme's default, unless the route asks for it always (ingress-nginx
 * use-port-in-redirects, www redirects). ingress-nginx's redirects may also drop one trailing `/` of the
 * path and query, or name the whole URL with nginx variables in it (permanent-/temporal-redirect,
 * app-root: model/location-template.ts).
 */

import { fillLocation, type LocationVariable } from "../../model/location-template.ts";
import type { CompiledRedirect } from "../table.ts";
import { modifyPath } from "./path-modifier.ts";

export function defaultPort(scheme: string): number {
  return scheme === "https" ? 443 : 80;
}

export interface RedirectInput {
  readonly listenerScheme: "http" | "https";
  readonly listenerPort: number;
  /** Normalised request host ("" when the client sent none usable). */
  readonly host: string;
  readonly path: string;
  /** `""` or `?…` */
  readonly query: string;
  /** The route's matched prefix, for ReplacePrefixMatch. */
  readonly prefix: string;
}

export function buildLocation(r: CompiledRedirect, i: RedirectInput): string {
  if (r.location !== undefined) return fillLocation(r.location, (v) => variable(v, i));
  const scheme = r.scheme ?? i.listenerScheme;
  const port = r.port ?? (r.scheme !== undefined ? defaultPort(scheme) : i.listenerPort);
  const path = r.path === undefined ? i.path : modifyPath(i.path, i.prefix, r.path);
  let uri = path + i.query;
  if (r.stripTrailingSlash === true && uri.charCodeAt(uri.length - 1) === 47) uri = uri.slice(0, -1);
  const host = r.hostname ?? i.host;
  // Without any host to name, a relative Location is the only honest answer.
  if (host === "") return uri === "" ? "/" : uri;
  const portPart = port === defaultPort(scheme) && r.writeDefaultPort !== true ? "" : `:${port}`;
  return `${scheme}://${host}${portPart}${uri}`;
}

/** The value of an nginx variable in a literal Location (model/location-template.ts says what each is). */
function variable(v: LocationVariable, i: RedirectInput): string {
  switch (v) {
    case "scheme":
      return i.listenerScheme;
    case "host":
      return i.host;
    case "http_host":
      if (i.host === "" || i.listenerPort === defaultPort(i.listenerScheme)) return i.host;
      return `${i.host}:${i.listenerPort}`;
    case "server_port":
      return String(i.listenerPort);
    case "request_uri":
      return i.path + i.query;
    case "uri":
      return i.path;
    case "args":
    case "query_string":
      return i.query.slice(1);
    case "is_args":
      return i.query === "" ? "" : "?";
    default:
      // Forward authentication's variables: translation never lets a redirect name them.
      return "";
  }
}
