/**
 * Objects the API returned that failed validation are left out of the snapshot, so translation never
 * sees them and computes no status. Reported here instead: a Problem each (for `/debug/problems`), and,
 * for the kinds whose status we own, a condition saying why the object is not served — built from the
 * raw object, as far as its spec can still be read.
 */
import type { Problem } from "../../model/index.ts";
import { condition, generationOf } from "../../status/conditions.ts";
import { gatewayGroup, RouteReason } from "../../status/reasons.ts";
import type { ObjectStatus } from "../../status/types.ts";
import type { InvalidObject } from "./assemble.ts";

const policyGroup = "gatehouse.dev";
const policyKinds = new Set([
  "AuthPolicy",
  "RateLimitPolicy",
  "BackendTrafficPolicy",
  "ScaleToZeroPolicy",
  "WAFPolicy",
]);

interface RawRef {
  readonly group?: unknown;
  readonly kind?: unknown;
  readonly namespace?: unknown;
  readonly name?: unknown;
  readonly sectionName?: unknown;
  readonly port?: unknown;
}

interface Raw {
  readonly metadata?: { readonly namespace?: string; readonly name?: string; readonly generation?: unknown };
  readonly spec?: {
    readonly gatewayClassName?: unknown;
    readonly parentRefs?: unknown;
    readonly targetRefs?: unknown;
  };
}

export function invalidProblems(invalid: readonly InvalidObject[]): Problem[] {
  return invalid.map((i) => {
    const meta = (i.object as Raw).metadata ?? {};
    return {
      object: { kind: i.kind, namespace: meta.namespace ?? "", name: meta.name ?? i.name },
      reason: "InvalidObject",
      message: `left out: ${i.reason}`,
      severity: "error",
    };
  });
}

/**
 * Status for invalid objects of ours: a Gateway of one of our classes gets Accepted/Programmed False
 * (Invalid); an HTTPRoute gets, for each parentRef naming a Gateway of ours, Accepted False
 * (UnsupportedValue); a policy of ours gets, for each targetRef, Accepted False (Invalid). `statuses` is
 * what translation computed: it tells which GatewayClasses and Gateways are ours.
 */
export function invalidStatuses(
  invalid: readonly InvalidObject[],
  statuses: readonly ObjectStatus[],
  controllerName: string,
): ObjectStatus[] {
  const ours = (kind: string) =>
    new Set(
      statuses.filter((s) => s.target.kind === kind).map((s) => `${s.target.namespace}/${s.target.name}`),
    );
  const classes = ours("GatewayClass");
  const gateways = ours("Gateway");
  const out: ObjectStatus[] = [];
  for (const i of invalid) {
    const raw = i.object as Raw;
    const namespace = raw.metadata?.namespace ?? "";
    const name = raw.metadata?.name;
    if (typeof name !== "string") continue;
    const gen = generationOf(raw);
    const message = `the object failed validation and is not served: ${i.reason}`;
    const target = (group: string) => ({ group, kind: i.kind, namespace, name });
    const withGen = gen !== undefined ? { generation: gen } : {};
    if (i.kind === "Gateway") {
      if (!classes.has(`/${String(raw.spec?.gatewayClassName)}`)) continue;
      const conditions = [
        condition("Accepted", false, "Invalid", message, gen),
        condition("Programmed", false, "Invalid", message, gen),
      ];
      out.push({ target: target(gatewayGroup), ...withGen, status: { conditions } });
    } else if (i.kind === "HTTPRoute") {
      const parents = refs(raw.spec?.parentRefs)
        .filter((r) => (r.group ?? gatewayGroup) === gatewayGroup && (r.kind ?? "Gateway") === "Gateway")
        .filter((r) => typeof r.name === "string" && gateways.has(`${r.namespace ?? namespace}/${r.name}`))
        .map((r) => ({
          parentRef: {
            group: gatewayGroup,
            kind: "Gateway",
            ...pick(r, "namespace", "name", "sectionName", "port"),
          },
          controllerName,
          conditions: [condition("Accepted", false, RouteReason.UnsupportedValue, message, gen)],
        }));
      if (parents.length) out.push({ target: target(gatewayGroup), ...withGen, status: { parents } });
    } else if (policyKinds.has(i.kind)) {
      const ancestors = refs(raw.spec?.targetRefs)
        .filter(
          (r) => typeof r.group === "string" && typeof r.kind === "string" && typeof r.name === "string",
        )
        .slice(0, 16)
        .map((r) => ({
          ancestorRef: { group: r.group, kind: r.kind, namespace, name: r.name, ...pick(r, "sectionName") },
          controllerName,
          conditions: [condition("Accepted", false, "Invalid", message, gen)],
        }));
      if (ancestors.length) out.push({ target: target(policyGroup), ...withGen, status: { ancestors } });
    }
  }
  return out;
}

function refs(v: unknown): RawRef[] {
  return Array.isArray(v) ? v.filter((r): r is RawRef => typeof r === "object" && r !== null) : [];
}

/** The named fields of a ref that are strings or numbers (what a status may echo). */
function pick(r: RawRef, ...keys: (keyof RawRef)[]): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const k of keys) {
    const v = r[k];
    if (typeof v === "string" || typeof v === "number") out[k] = v;
  }
  return out;
}
