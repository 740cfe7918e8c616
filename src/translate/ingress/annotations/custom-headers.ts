/**
 * ingress-nginx `custom-headers: <namespace>/<name>` (internal/ingress/annotations/customheaders): the named
 * ConfigMap's `data` entries are set as response headers on every path of the Ingress (nginx.tmpl writes
 * `more_set_headers "<name>: <value>"` into each location: replacing the upstream's, on every status), here
 * a ResponseHeaderModifier `set` on each route, after the other families' filters. As in ingress-nginx:
 * - a name is set only when the controller allows it (its ConfigMap's `global-allowed-response-headers`,
 *   here `--global-allowed-response-headers`); the list is empty by default, so every name is refused until
 *   an operator lists it;
 * - names must match `^[a-zA-Z0-9_-]+$`, values ingress-nginx's value pattern, which lists every printable
 *   ASCII character: not empty, no tab or other control character, nothing past `~`;
 * - a value is sent as written (nginx.tmpl escapes `$`, so `$remote_addr` goes out literally);
 * - entries go out sorted by name (Go templates range over a map in key order).
 * Where it differs:
 * - a refusal denies the Ingress's locations in ingress-nginx (503); here it is an `InvalidAnnotation` and
 *   the paths are served: without the ConfigMap's headers when it is missing, could not be read (the
 *   Kubernetes source names it in ResourceSnapshot `unreadable`) or is not the Ingress's own,
 *   without one entry when that entry is refused (the others are set);
 * - the ConfigMap must be in the Ingress's namespace (ingress-nginx's docs say so, its code takes any;
 *   its other annotations naming objects refuse another namespace unless allow-cross-namespace-resources);
 *   a bare `name` is looked up there too (ingress-nginx finds nothing then);
 * - names are compared with the allowed list case-insensitively, as HTTP compares them (ingress-nginx:
 *   exactly);
 * - hop-by-hop headers and Content-Length are refused: they frame the message, which the gateway owns.
 * Unlike the other families this one reads more than the Ingress (a ConfigMap, a flag), so it is not in
 * families.ts (kept per Ingress object alone); ingresses.ts calls it, and its result is kept per Ingress
 * with what it was read from, so a changed ConfigMap is read again.
 */
import { customHeaderNameProblem } from "../../../model/http-syntax.ts";
import type { Problem, SourceRef } from "../../../model/index.ts";
import { CUSTOM_HEADERS, configMapKey, customHeadersConfigMap } from "../../../sources/nginx-references.ts";
import type { ConfigMap } from "../../../sources/schema/core.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import type { UnreadableObject } from "../../../sources/snapshot.ts";
import { arrayOf, nameOf, namespaceOf } from "../../common/objects.ts";
import { compareStrings, sameMembers } from "../../common/sort.ts";
import { annotationReader, type IngressEdits, type RouteEdit } from "./route-edits.ts";

/** A ConfigMap with many refused entries reports this many, then one count of the rest. */
const MAX_ENTRY_PROBLEMS = 10;

/** Why `value` cannot be sent, per ingress-nginx's value pattern (printable ASCII, not empty), or undefined. */
function valueProblem(value: string): string | undefined {
  if (value === "") return "is empty";
  for (let i = 0; i < value.length; i++) {
    const c = value.codePointAt(i) as number;
    if (c < 0x20 || c > 0x7e)
      return `holds U+${c.toString(16).toUpperCase().padStart(4, "0")}: values are printable ASCII only (as ingress-nginx)`;
  }
  return undefined;
}

/** A ConfigMap, or why the source could not read it (ResourceSnapshot `unreadable`). */
type Looked = ConfigMap | string;

/** The ConfigMaps by `namespace/name`, and those the source could not read, for customHeadersEdits. */
export function configMapIndex(
  configMaps: readonly ConfigMap[] | undefined,
  unreadable: readonly UnreadableObject[] | undefined = [],
): Map<string, Looked> {
  const out = new Map<string, Looked>();
  for (const u of arrayOf(unreadable))
    if (u?.kind === "ConfigMap") out.set(`${u.namespace}/${u.name}`, u.why);
  for (const cm of arrayOf(configMaps)) if (cm?.metadata) out.set(`${namespaceOf(cm)}/${nameOf(cm)}`, cm);
  return out;
}

interface Kept {
  readonly configMap: Looked | undefined;
  readonly allowed: readonly string[];
  readonly edits: IngressEdits;
}
const kept = new WeakMap<Ingress, Kept>();

/** The ResponseHeaderModifier the Ingress's custom-headers asks for, and what was refused. */
export function customHeadersEdits(
  ingress: Ingress,
  ref: SourceRef,
  configMaps: ReadonlyMap<string, Looked>,
  allowed: readonly string[],
): IngressEdits {
  const key = customHeadersConfigMap(ingress);
  const configMap = key === undefined ? undefined : configMaps.get(key);
  const hit = kept.get(ingress);
  if (hit !== undefined && hit.configMap === configMap && sameMembers(hit.allowed, allowed)) return hit.edits;
  const edits = readCustomHeaders(ingress, ref, configMap, allowed);
  kept.set(ingress, { configMap, allowed, edits });
  return edits;
}

function readCustomHeaders(
  ingress: Ingress,
  ref: SourceRef,
  configMap: Looked | undefined,
  allowed: readonly string[],
): IngressEdits {
  const problems: Problem[] = [];
  const r = annotationReader(ingress, ref, problems);
  const raw = r.raw(CUSTOM_HEADERS);
  const parsed = raw === undefined ? undefined : configMapKey(raw, namespaceOf(ingress));
  if (raw === undefined || parsed === undefined) return { problems };
  if ("why" in parsed) {
    r.bad(CUSTOM_HEADERS, raw, parsed.why);
    return { problems };
  }
  if (configMap === undefined) {
    r.bad(CUSTOM_HEADERS, raw, `ConfigMap ${parsed.key} not found`);
    return { problems };
  }
  if (typeof configMap === "string") {
    r.bad(CUSTOM_HEADERS, raw, `ConfigMap ${parsed.key} could not be read: ${configMap}`);
    return { problems };
  }
  const allowedNames = new Set(allowed.map((n) => n.toLowerCase()));
  const set: { name: string; value: string }[] = [];
  let refused = 0;
  const refuse = (why: string) => {
    if (++refused <= MAX_ENTRY_PROBLEMS) r.bad(CUSTOM_HEADERS, raw, why);
  };
  const entries = Object.entries(configMap.data ?? {}).sort(([a], [b]) => compareStrings(a, b));
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    const entry = `header ${JSON.stringify(name)} of ConfigMap ${parsed.key}`;
    const nameProblem = customHeaderNameProblem(name);
    if (nameProblem !== undefined) refuse(`${entry}: ${nameProblem}`);
    else if (!allowedNames.has(lower))
      refuse(
        `${entry} is not allowed: --global-allowed-response-headers does not list it (ingress-nginx's global-allowed-response-headers)`,
      );
    else if (set.some((h) => h.name === lower))
      refuse(`${entry} names a header already set (names are compared case-insensitively)`);
    else {
      const why = valueProblem(value);
      if (why === undefined) set.push({ name: lower, value });
      else refuse(`${entry}: its value ${why}`);
    }
  }
  if (refused > MAX_ENTRY_PROBLEMS)
    r.bad(
      CUSTOM_HEADERS,
      raw,
      `${refused - MAX_ENTRY_PROBLEMS} more entries of ConfigMap ${parsed.key} refused`,
    );
  if (set.length === 0) return { problems };
  const edit: RouteEdit = {
    filters: [{ kind: "ResponseHeaderModifier", edits: { set, add: [], remove: [] } }],
  };
  return { edit, problems };
}

/** `edit` with the custom headers' filter after its own (they set the last word on the response). */
export function withCustomHeaders(
  edit: RouteEdit | undefined,
  headers: RouteEdit | undefined,
): RouteEdit | undefined {
  if (headers === undefined) return edit;
  if (edit === undefined) return headers;
  return { ...edit, filters: [...(edit.filters ?? []), ...(headers.filters ?? [])] };
}
