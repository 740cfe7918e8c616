/**
 * ingress-nginx's request mirroring (internal/ingress/annotations/mirror/main.go; in nginx.tmpl each
 * location gets `mirror /_mirror-<uid>; mirror_request_body on|off;` and template.go's
 * buildMirrorLocations an internal location with `proxy_set_header Host "<host>"; proxy_pass "<target>";`):
 * - `mirror-target: URL` → a RequestMirror filter on every route of the Ingress (every path, as there) to
 *   that URL (model/mirror-target.ts reads it): `http` or `https`, a written-out host, a path that may use
 *   `$request_uri`, `$uri`, `$args`, `$query_string`, `$is_args`, `$host` (any other variable is
 *   refused). Without a path the copy keeps the request's path and query (nginx would send its internal
 *   location's name, `/_mirror-<uid>`); a path without variables gets the request's query appended, as
 *   nginx's proxy_pass does.
 * - `mirror-host: H` → the copy's Host; by default the target's host name without port (as
 *   ingress-nginx's `url.Hostname()`).
 * - `mirror-request-body: on|off` (default on): `off` sends copies without body, with `Content-Length: 0`
 *   (nginx kept the request's Content-Length, so a mirror would wait for a body that never came).
 * Differences from nginx, where the main request waits for its mirrors: a copy never delays the request;
 * bodies are copied when read whole first (up to --request-buffer-bytes), bigger ones are not mirrored
 * (counted in gatehouse_mirror_requests_total); the copy carries the headers sent upstream (with
 * X-Forwarded-*); https targets have their certificates verified (nginx's proxy_ssl_verify is off).
 */
import type { Filter } from "../../../model/index.ts";
import { mirrorHostProblem, parseMirrorTarget } from "../../../model/mirror-target.ts";
import type { AnnotationFamily, AnnotationReader } from "./route-edits.ts";

export const mirrorFamily: AnnotationFamily = {
  names: ["mirror-target", "mirror-host", "mirror-request-body"],
  read(r) {
    const raw = r.raw("mirror-target");
    if (raw === undefined || raw.trim() === "") {
      // A Host for a mirror that does not exist: said, not dropped silently (`mirror-request-body`
      // alone asks for nothing either way).
      const lone = r.raw("mirror-host");
      if (lone !== undefined && lone.trim() !== "") r.bad("mirror-host", lone, "needs mirror-target");
      return undefined;
    }
    const body = requestBody(r);
    const host = mirrorHost(r);
    const parsed = parseMirrorTarget(raw);
    if (!parsed.ok) return r.bad("mirror-target", raw, parsed.message);
    const mirror: Filter = {
      kind: "RequestMirror",
      url: parsed.target,
      percent: 100,
      ...(host !== undefined ? { host } : {}),
      ...(body === false ? { body: false as const } : {}),
    };
    return { filters: [mirror] };
  },
};

/** `on` or `off`, spaces removed as ingress-nginx's validator does; anything else is refused (on). */
function requestBody(r: AnnotationReader): boolean | undefined {
  const raw = r.raw("mirror-request-body");
  if (raw === undefined) return undefined;
  const v = raw.replaceAll(" ", "");
  if (v === "on") return true;
  if (v === "off") return false;
  return r.bad("mirror-request-body", raw, 'must be "on" or "off" (bodies are mirrored)');
}

/** A host with an optional port; refused values leave the target's host name, as ingress-nginx defaults. */
function mirrorHost(r: AnnotationReader): string | undefined {
  const raw = r.raw("mirror-host");
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (v === "") return undefined;
  const why = mirrorHostProblem(v);
  return why === undefined ? v : r.bad("mirror-host", raw, `${why} (the target's host is sent)`);
}
