/**
 * ingress-nginx's client address lists (internal/ingress/annotations/ipallowlist and ipdenylist, written
 * into each location as nginx `deny` lines, then `allow` lines and `deny all`):
 * - `allowlist-source-range: CIDR,…` → only these client addresses are served; its older name
 *   `whitelist-source-range` is read only when `allowlist-source-range` is absent or empty (ingress-nginx's
 *   annotation alias), and a different value under both names is reported, the older one not applied;
 * - `denylist-source-range: CIDR,…` → these addresses are refused, checked first: deny beats allow.
 * Entries are IPv4 or IPv6 CIDRs or bare addresses, comma-separated, spaces around them ignored; an empty
 * value asks for nothing (as the audit's `off` values say). A refused client gets 403 with a problem+json
 * body (auth/ip-access.ts) on every path of the Ingress, on both fronts.
 * Bad input is never open: where ingress-nginx rejects an Ingress whose list does not parse (annotation
 * validation) or denies its locations (validation off), Gatehouse reports `InvalidAnnotation` naming
 * the annotation and the value, serves the rest of the Ingress's settings, and refuses every client on its
 * paths (the model list carries `invalid`).
 */
import type { IPAccessList, Route, SourceRef } from "../../../model/index.ts";
import { parseRange } from "../../../model/ip-ranges.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { annotationOf } from "../../common/objects.ts";
import { NGINX_PREFIX } from "../annotations/nginx-annotations.ts";
import type { AnnotationFamily, AnnotationReader, RouteEdit } from "../annotations/route-edits.ts";

export const SOURCE_RANGE_ANNOTATIONS = [
  "allowlist-source-range",
  "whitelist-source-range",
  "denylist-source-range",
] as const;

/** Longest entry shown in a message. */
const MAX_SHOWN = 60;

/** The entries of a list, or `false` when one is not an address or CIDR (reported); undefined: absent. */
function entries(r: AnnotationReader, name: string): string[] | false | undefined {
  const raw = r.raw(name);
  if (raw === undefined || raw.trim() === "") return undefined;
  const out: string[] = [];
  for (const part of raw.split(",")) {
    const entry = part.trim();
    if (parseRange(entry) === undefined) {
      const shown = entry.length > MAX_SHOWN ? `${entry.slice(0, MAX_SHOWN)}…` : entry;
      r.bad(
        name,
        raw,
        `${JSON.stringify(shown)} is not an IPv4 or IPv6 address or CIDR, so every path of the Ingress answers 403 (never open)`,
      );
      return false;
    }
    if (!out.includes(entry)) out.push(entry);
  }
  return out;
}

export const sourceRangeFamily: AnnotationFamily = {
  names: SOURCE_RANGE_ANNOTATIONS,
  read(r): RouteEdit | undefined {
    let allow = entries(r, "allowlist-source-range");
    if (allow === undefined) allow = entries(r, "whitelist-source-range");
    else {
      const older = r.raw("whitelist-source-range") ?? "";
      if (older.trim() !== "" && older.trim() !== r.raw("allowlist-source-range")?.trim())
        r.bad(
          "whitelist-source-range",
          older,
          "allowlist-source-range is set too and wins (the older name is read only without it)",
        );
    }
    const deny = entries(r, "denylist-source-range");
    if (allow === undefined && deny === undefined) return undefined;
    const invalid = allow === false || deny === false;
    const spec = {
      allow: allow === false ? [] : (allow ?? []),
      deny: deny === false ? [] : (deny ?? []),
      ...(invalid ? { invalid: "a source-range annotation could not be read" } : {}),
    };
    // One list object per Ingress, so the proxy compiles it once for all of the Ingress's routes.
    let list: IPAccessList | undefined;
    const perRoute = (route: Route): Route => {
      if (list === undefined || !sameSource(list.source, route.source))
        list = { source: route.source, ...spec };
      return { ...route, ipAccess: [...(route.ipAccess ?? []), list] };
    };
    return { perRoute };
  },
};

function sameSource(a: SourceRef, b: SourceRef): boolean {
  return a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
}

/** The source-range annotations `ingress` sets (full keys), for own-guards.ts: a canary cannot apply them. */
export function sourceRangeKeys(ingress: Ingress): string[] {
  return SOURCE_RANGE_ANNOTATIONS.map((n) => NGINX_PREFIX + n).filter(
    (key) => (annotationOf(ingress, key)?.trim() ?? "") !== "",
  );
}
