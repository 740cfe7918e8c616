/**
 * Never silent, never open, for Ingress annotations. Every key under `nginx.ingress.kubernetes.io/` or
 * `gatehouse.dev/` is looked up in the tables of nginx-annotations.ts: an annotation Gatehouse does not
 * honour is a warning naming what differs from ingress-nginx, an unknown one is reported as a likely typo,
 * and one that asks for an access control Gatehouse does not enforce (auth, source ranges, client
 * certificates, WAF, connection limits) makes the Ingress fail closed: its paths answer 403 with a
 * problem+json body saying why, never the backend. `--allow-unenforced-annotations` serves them open
 * instead, knowingly, with the warning kept. Keys are case-sensitive, as in ingress-nginx: a key that
 * differs from a known one only in case is reported, and counts as the access control it spells.
 */
import type { Problem, RouteAction, SourceRef, VirtualHost } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { keptPerObject } from "../../common/kept-check.ts";
import { problem } from "../../common/problems.ts";
import { GATEHOUSE_ANNOTATIONS, GATEHOUSE_PREFIX } from "../gatehouse-annotations.ts";
import { type AnnotationEntry, NGINX_ANNOTATIONS, NGINX_PREFIX } from "./nginx-annotations.ts";

/** At most this many annotation problems per Ingress; the rest are counted in one more. */
export const MAX_ANNOTATION_PROBLEMS = 20;

/** Longest key quoted in a message (folder mode does not bound keys as the API server does). */
const MAX_KEY_SHOWN = 120;

export interface AnnotationAudit {
  readonly problems: readonly Problem[];
  /** The access controls asked for and not enforced (full keys, in key order); empty: none. */
  readonly unenforced: readonly string[];
}

const prefixes: readonly (readonly [string, Readonly<Record<string, AnnotationEntry>>])[] = [
  [NGINX_PREFIX, NGINX_ANNOTATIONS],
  [GATEHOUSE_PREFIX, GATEHOUSE_ANNOTATIONS],
];

/** Audits are kept per Ingress object: an unchanged Ingress is the same object (as for ingress/memo.ts). */
/** The audit of one Ingress's annotations, problems in key order, capped per Ingress. */
export const auditAnnotations: (ingress: Ingress, ref: SourceRef) => AnnotationAudit =
  keptPerObject(auditOnce);

function auditOnce(ingress: Ingress, ref: SourceRef): AnnotationAudit {
  const annotations = ingress.metadata?.annotations;
  if (annotations === undefined || annotations === null || typeof annotations !== "object") {
    return { problems: [], unenforced: [] };
  }
  const found: Problem[] = [];
  const unenforced: string[] = [];
  for (const key of Object.keys(annotations).sort()) {
    const lower = key.toLowerCase();
    const table = prefixes.find(([prefix]) => lower.startsWith(prefix));
    if (table === undefined) continue;
    const [prefix, entries] = table;
    const name = lower.slice(prefix.length);
    const entry = Object.hasOwn(entries, name) ? entries[name] : undefined;
    const shown = key.length > MAX_KEY_SHOWN ? `${key.slice(0, MAX_KEY_SHOWN)}…` : key;
    const value = annotations[key];
    const off =
      entry?.off !== undefined && typeof value === "string" && entry.off.includes(value.trim().toLowerCase());
    if (key !== lower) {
      const meant = entry === undefined ? "" : `; did you mean ${prefix}${name}?`;
      const message = `annotation ${shown}: keys are case-sensitive, so this one is not read${meant}`;
      found.push(problem(ref, "AnnotationKeyCase", message, "warning"));
      if (entry?.guard && !off) unenforced.push(key);
      continue;
    }
    if (entry === undefined) {
      found.push(
        problem(ref, "UnknownAnnotation", `annotation ${shown} is unknown (a typo?); not read`, "warning"),
      );
      continue;
    }
    if (entry.support === "honoured" || off) continue;
    if (entry.support === "no-effect") {
      const message = `annotation ${shown}: accepted, with no effect here; ${entry.note}`;
      found.push(problem(ref, "AnnotationNoEffect", message, "info"));
      continue;
    }
    if (entry.guard) unenforced.push(key);
    const reason = entry.support === "refused" ? "AnnotationRefused" : "AnnotationNotHonoured";
    const what = entry.support === "refused" ? "refused" : "not honoured";
    found.push(problem(ref, reason, `annotation ${shown}: ${what}; ${entry.note}`, "warning"));
  }
  const problems =
    found.length <= MAX_ANNOTATION_PROBLEMS
      ? found
      : [
          ...found.slice(0, MAX_ANNOTATION_PROBLEMS),
          problem(
            ref,
            "AnnotationProblemsCapped",
            `${found.length - MAX_ANNOTATION_PROBLEMS} more annotation problems not listed`,
            "warning",
          ),
        ];
  return { problems, unenforced };
}

/** At most this many keys named in one message; the rest are counted. */
const MAX_KEYS_LISTED = 10;

function listed(keys: readonly string[]): string {
  const cut = (k: string) => (k.length > MAX_KEY_SHOWN ? `${k.slice(0, MAX_KEY_SHOWN)}…` : k);
  const shown = keys.slice(0, MAX_KEYS_LISTED).map(cut).join(", ");
  return keys.length > MAX_KEYS_LISTED ? `${shown} and ${keys.length - MAX_KEYS_LISTED} more` : shown;
}

/** What an Ingress whose access controls are not enforced answers on every path. */
export function failClosedAction(ingress: SourceRef, unenforced: readonly string[]): RouteAction {
  const detail = `Ingress ${ingress.namespace}/${ingress.name} asks for access controls this gateway does not enforce: ${listed(unenforced)}`;
  return {
    kind: "DirectResponse",
    status: 403,
    contentType: "application/problem+json",
    body: JSON.stringify({ type: "about:blank", title: "Forbidden", status: 403, detail }),
  };
}

/** The problem that says an Ingress fails closed (or, allowed by the operator, is served open). */
export function unenforcedProblem(
  ingress: SourceRef,
  unenforced: readonly string[],
  allowed: boolean,
): Problem {
  const list = listed(unenforced);
  return allowed
    ? problem(
        ingress,
        "AnnotationNotEnforced",
        `access controls not enforced: ${list}; served open because --allow-unenforced-annotations is set`,
        "warning",
      )
    : problem(
        ingress,
        "AnnotationNotEnforced",
        `access controls not enforced: ${list}; every path of the Ingress answers 403 (--allow-unenforced-annotations serves them open)`,
      );
}

/** The virtual hosts with every route of a failing-closed Ingress answering `failClosedAction`. */
export function failClosed(
  virtualHosts: readonly VirtualHost[],
  actions: ReadonlyMap<string, RouteAction>,
): VirtualHost[] {
  if (actions.size === 0) return [...virtualHosts];
  return virtualHosts.map((vh) => {
    let changed = false;
    const routes = vh.routes.map((r) => {
      const action =
        r.source.kind === "Ingress" ? actions.get(`${r.source.namespace}/${r.source.name}`) : undefined;
      if (action === undefined) return r;
      changed = true;
      return { ...r, action };
    });
    return changed ? { ...vh, routes } : vh;
  });
}
