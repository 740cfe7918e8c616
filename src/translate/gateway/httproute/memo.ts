/**
 * HTTPRoute translations kept from one translate to the next. A config change usually touches a few
 * objects, yet every apply translated every HTTPRoute again: at 10k routes that was half of translate's
 * time (31 of 60 ms warm, more on the cold code paths a rare apply runs on). A route's translation
 * depends on the route object and on what it read of the snapshot: the Services, EndpointSlices,
 * BackendTLSPolicies (whether an `https` port may be used) and HTTPRouteFilters it looked up (recorded by the index handed to it) and the ReferenceGrants. A kept translation is used
 * again only when the route is the same object (sources keep unchanged objects: the folder source's
 * parse cache, the informers' store) and every one of those reads gives the same objects again.
 *
 * Kept results are shared between models, so nothing downstream may change them (the translators build
 * new objects; `{ ...route, auth }`). kept-check.ts: GATEHOUSE_TRANSLATE_CHECK=1 (set for the test
 * suite, test/setup.ts) translates again on every reuse and throws if the kept result differs.
 */
import type { BackendTLSPolicy } from "../../../sources/schema/backend-tls-policy.ts";
import type { EndpointSlice, Service } from "../../../sources/schema/core.ts";
import type { HTTPRoute, ReferenceGrant } from "../../../sources/schema/gateway.ts";
import type { HTTPRouteFilterObject } from "../../../sources/schema/route-filter.ts";
import { checkingKept, checkKept } from "../../common/kept-check.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import { type HTTPRouteTranslation, translateHTTPRoute } from "./httproute.ts";

interface Kept {
  readonly result: HTTPRouteTranslation;
  /** Keys looked up and what they gave. */
  readonly services: readonly (readonly [string, Service | undefined])[];
  readonly slices: readonly (readonly [string, readonly EndpointSlice[] | undefined])[];
  readonly filters: readonly (readonly [string, HTTPRouteFilterObject | undefined])[];
  readonly tlsPolicies: readonly (readonly [string, readonly BackendTLSPolicy[] | undefined])[];
  readonly grants: readonly ReferenceGrant[];
}

const kept = new WeakMap<HTTPRoute, Kept>();

/** The last grants list seen: a translate whose list has the same objects in order reuses it. */
let lastGrants: readonly ReferenceGrant[] = [];

/** The same objects in the same order (an absent list is an empty one). */
function sameObjects<T>(a: readonly T[] | undefined, b: readonly T[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((o, i) => o === y[i]);
}

/** `grants`, or the previous list when it holds the same objects (so kept results compare by identity). */
function sameGrants(grants: readonly ReferenceGrant[]): readonly ReferenceGrant[] {
  if (sameObjects(grants, lastGrants)) return lastGrants;
  lastGrants = grants;
  return grants;
}

/** A read-only map over `base` that records every key asked for, and whether anything read it all. */
class RecordingMap<V> implements ReadonlyMap<string, V> {
  readonly reads: [string, V | undefined][] = [];
  readonly #asked = new Set<string>();
  /** Iterated or sized: the reads do not say what was used. */
  whole = false;

  constructor(private readonly base: ReadonlyMap<string, V>) {}

  get(key: string): V | undefined {
    const v = this.base.get(key);
    // One record per key: a translation asks for the same Service once per rule, and every record is
    // kept as long as the route (at 10k routes the repeats were most of what the memo held).
    if (!this.#asked.has(key)) {
      this.#asked.add(key);
      this.reads.push([key, v]);
    }
    return v;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  get size(): number {
    this.whole = true;
    return this.base.size;
  }

  forEach(f: (value: V, key: string, map: ReadonlyMap<string, V>) => void): void {
    this.whole = true;
    this.base.forEach((v, k) => {
      f(v, k, this);
    });
  }

  entries(): MapIterator<[string, V]> {
    this.whole = true;
    return this.base.entries();
  }

  keys(): MapIterator<string> {
    this.whole = true;
    return this.base.keys();
  }

  values(): MapIterator<V> {
    this.whole = true;
    return this.base.values();
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }
}

/** translateHTTPRoute, reusing the route's last translation when nothing it read has changed. */
export function translateHTTPRouteKept(
  route: HTTPRoute,
  index: SnapshotIndex,
  grantList: readonly ReferenceGrant[],
): HTTPRouteTranslation {
  const grants = sameGrants(grantList);
  const k = kept.get(route);
  if (
    k !== undefined &&
    k.grants === grants &&
    k.services.every(([key, s]) => index.services.get(key) === s) &&
    k.slices.every(([key, s]) => sameObjects(index.slicesByService.get(key), s)) &&
    k.filters.every(([key, f]) => index.routeFilters.get(key) === f) &&
    k.tlsPolicies.every(([key, p]) => sameObjects(index.backendTLSPolicies?.get(key), p))
  ) {
    if (checkingKept)
      checkKept(
        `HTTPRoute ${route.metadata?.namespace}/${route.metadata?.name}`,
        k.result,
        translateHTTPRoute(route, index, grants),
      );
    return k.result;
  }
  const services = new RecordingMap(index.services);
  const slices = new RecordingMap(index.slicesByService);
  const filters = new RecordingMap(index.routeFilters);
  const tlsPolicies = new RecordingMap(index.backendTLSPolicies ?? new Map());
  const result = translateHTTPRoute(
    route,
    { services, slicesByService: slices, routeFilters: filters, backendTLSPolicies: tlsPolicies },
    grants,
  );
  if (!services.whole && !slices.whole && !filters.whole && !tlsPolicies.whole)
    kept.set(route, {
      result,
      services: services.reads,
      slices: slices.reads,
      filters: filters.reads,
      tlsPolicies: tlsPolicies.reads,
      grants,
    });
  else kept.delete(route);
  return result;
}
