/**
 * Pure helpers of the status writer: the `.status` to write given what the object has now and what
 * translation computed, whether that differs from what it has, and the merge patch that turns one into
 * the other. No clock: `now` is given.
 */

type Json = unknown;
type Rec = Record<string, unknown>;

const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Per-parent status lists where each entry names its controller; entries of other controllers are kept
 * untouched (Gateway API: each controller owns only its own RouteParentStatus / PolicyAncestorStatus).
 */
const perControllerLists = new Set(["parents", "ancestors"]);

/** The key that identifies an element of a status list, to pair new elements with old ones. */
function identity(el: unknown): string | undefined {
  if (!isRec(el)) return undefined;
  if (typeof el.type === "string" && "status" in el) return `condition:${el.type}`;
  if (typeof el.name === "string") return `name:${el.name}`;
  if (isRec(el.parentRef)) return `parent:${canonical(el.parentRef)}`;
  if (isRec(el.ancestorRef)) return `ancestor:${canonical(el.ancestorRef)}`;
  return undefined;
}

/**
 * The status to write: `computed` (from translation, no `lastTransitionTime`) laid over `current`:
 * - each condition keeps its old `lastTransitionTime` when its `status` did not change, else gets `now`;
 * - list elements pair with old ones by identity (condition type, listener name, parentRef, ancestorRef);
 * - in `parents`/`ancestors`, entries whose `controllerName` is not `controllerName` are kept as they are,
 *   before ours.
 */
export function desiredStatus(current: Json, computed: Json, controllerName: string, now: string): Json {
  return lay(current, computed, controllerName, now, "");
}

function lay(old: Json, next: Json, controller: string, now: string, key: string): Json {
  if (Array.isArray(next)) {
    const oldList = Array.isArray(old) ? old : [];
    const byId = new Map<string, unknown>();
    for (const o of oldList) {
      const id = identity(o);
      if (id) byId.set(id, o);
    }
    const ours = next.map((el, i) => {
      const id = identity(el);
      const prev = id ? byId.get(id) : oldList[i];
      if (key === "conditions" && isRec(el)) return stampCondition(isRec(prev) ? prev : undefined, el, now);
      return lay(prev, el, controller, now, "");
    });
    if (!perControllerLists.has(key)) return ours;
    const foreign = oldList.filter((o) => isRec(o) && o.controllerName !== controller);
    return [...foreign, ...ours];
  }
  if (isRec(next)) {
    const out: Rec = {};
    const prev = isRec(old) ? old : {};
    for (const [k, v] of Object.entries(next)) out[k] = lay(prev[k], v, controller, now, k);
    return out;
  }
  return next;
}

function stampCondition(prev: Rec | undefined, next: Rec, now: string): Rec {
  const keep = prev && prev.status === next.status && typeof prev.lastTransitionTime === "string";
  return { ...next, lastTransitionTime: keep ? prev.lastTransitionTime : now };
}

/** JSON with object keys sorted: equal values give equal strings whatever the key order. */
export function canonical(v: Json): string {
  return JSON.stringify(v, (_k, val) =>
    isRec(val)
      ? Object.fromEntries(
          Object.keys(val)
            .sort()
            .map((k) => [k, val[k]]),
        )
      : val,
  );
}

export function sameJson(a: Json, b: Json): boolean {
  return canonical(a ?? {}) === canonical(b ?? {});
}

/**
 * A JSON merge patch (RFC 7386) that turns `current` into `desired`: keys of `desired` set (objects
 * recursively), keys only `current` has set to null. Lists are replaced whole, as merge patch does.
 */
export function replacementPatch(current: Json, desired: Json): Json {
  if (!isRec(desired) || !isRec(current)) return desired;
  const out: Rec = {};
  for (const k of Object.keys(current)) if (!(k in desired)) out[k] = null;
  for (const [k, v] of Object.entries(desired)) out[k] = replacementPatch(current[k], v);
  return out;
}
