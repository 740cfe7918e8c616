/**
 * Location header of a redirect route (Gateway API RequestRedirect). Port rules from the spec: an
 * explicit port wins; otherwise a redirect that names a scheme goes to that scheme's well-known port,
 * and one that does not keeps the listener's port (the model's, never a remapped bound port). The port
 * is left out when it is the scheme's default.
 */

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
  const scheme = r.scheme ?? i.listenerScheme;
  const port = r.port ?? (r.scheme !== undefined ? defaultPort(scheme) : i.listenerPort);
  const path = r.path === undefined ? i.path : modifyPath(i.path, i.prefix, r.path);
  const host = r.hostname ?? i.host;
  // Without any host to name, a relative Location is the only honest answer.
  if (host === "") return path + i.query;
  const portPart = port === defaultPort(scheme) ? "" : `:${port}`;
  return `${scheme}://${host}${portPart}${path}${i.query}`;
}
