/**
 * Consistent hashing on a ring (ketama, as ingress-nginx's `upstream-hash-by` uses through resty.chash):
 * each endpoint owns POINTS points, hashed from its address, and a key goes to the owner of the first
 * point at or after the key's hash. An endpoint that joins or leaves takes or gives up only the keys
 * between its own points, about 1/n of them. The points depend only on the endpoint addresses, so every
 * replica builds the same ring. xxHash32 (a fixed, documented function) hashes points and keys.
 */

import type { HashKeyPart } from "../../model/index.ts";
import type { CompiledBackend } from "../table.ts";
import type { EndpointPicker } from "./endpoint-picker.ts";
import { type BalanceInput, hashKeyOf } from "./request-input.ts";

/** Points per endpoint (ketama's 160): with 10 endpoints each share is within a few % of 1/10. */
const POINTS = 160;

export interface HashRing {
  /** Point hashes, ascending. */
  readonly points: Uint32Array;
  /** The endpoint index owning each point. */
  readonly owners: Uint16Array | Uint32Array;
}

/** A ring over endpoint keys (`ip:port`). */
export function buildRing(keys: readonly string[]): HashRing {
  const n = keys.length * POINTS;
  const hashes = new Uint32Array(n);
  const owners = keys.length < 65536 ? new Uint16Array(n) : new Uint32Array(n);
  const order = new Uint32Array(n);
  let k = 0;
  for (const [i, key] of keys.entries())
    for (let p = 0; p < POINTS; p++) {
      hashes[k] = Bun.hash.xxHash32(`${key}-${p}`);
      owners[k] = i;
      order[k] = k;
      k++;
    }
  // Sort by hash, ties by owner, so that equal hashes order the same on every replica.
  order.sort(
    (a, b) => (hashes[a] as number) - (hashes[b] as number) || (owners[a] as number) - (owners[b] as number),
  );
  const points = new Uint32Array(n);
  const sortedOwners = keys.length < 65536 ? new Uint16Array(n) : new Uint32Array(n);
  for (let j = 0; j < n; j++) {
    const from = order[j] as number;
    points[j] = hashes[from] as number;
    sortedOwners[j] = owners[from] as number;
  }
  return { points, owners: sortedOwners };
}

/** The endpoint index for `hash`; with `avoid`, the next endpoint round the ring that is not it. */
export function ringLookup(ring: HashRing, hash: number, avoid = -1): number {
  const { points, owners } = ring;
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((points[mid] as number) < hash) lo = mid + 1;
    else hi = mid;
  }
  const n = points.length;
  for (let step = 0; step < n; step++) {
    const owner = owners[(lo + step) % n] as number;
    if (owner !== avoid) return owner;
  }
  return owners[lo % n] as number;
}

const rings = new WeakMap<CompiledBackend, HashRing>();

/** The backend's ring, built once per compiled backend and shared by every route hashing over it. */
export function ringOf(backend: CompiledBackend): HashRing {
  let ring = rings.get(backend);
  if (ring === undefined) {
    ring = buildRing(backend.bases.map((b) => b.slice(7)));
    rings.set(backend, ring);
  }
  return ring;
}

const subsetRings = new Map<number, HashRing>();

/** The ring over `count` subsets (`set1`…): it depends on the count only, so it is shared. */
function subsetRing(count: number): HashRing {
  let ring = subsetRings.get(count);
  if (ring === undefined) {
    ring = buildRing(Array.from({ length: count }, (_, i) => `set${i + 1}`));
    subsetRings.set(count, ring);
  }
  return ring;
}

/**
 * ingress-nginx's chashsubset: endpoints in order cut into subsets of `size` (the last filled up from the
 * first endpoints), the key's subset found on a ring of subset names, an endpoint of it drawn at random.
 */
function subsetPick(n: number, size: number, hash: number, avoid: number): number {
  const count = Math.ceil(n / size);
  const set = ringLookup(subsetRing(count), hash);
  const at = (offset: number) => (set * size + (offset % size)) % n;
  const offset = Math.floor(Math.random() * size);
  // A retry takes the subset's next member (the same one only when the subset has no other).
  return at(offset) === avoid ? at(offset + 1) : at(offset);
}

/** `upstream-hash-by`: the key's endpoint on the ring; a request without key values goes round robin. */
export function consistentHashPicker(
  backend: CompiledBackend,
  parts: readonly HashKeyPart[],
  fallback: EndpointPicker,
  subsetSize?: number,
): EndpointPicker {
  const ring = subsetSize === undefined ? ringOf(backend) : undefined;
  const n = backend.bases.length;
  return {
    pick(input: BalanceInput, avoid: number): number {
      const key = hashKeyOf(parts, input);
      if (key === undefined) return fallback.pick(input, avoid);
      const hash = Bun.hash.xxHash32(key);
      return ring === undefined
        ? subsetPick(n, subsetSize as number, hash, avoid)
        : ringLookup(ring, hash, avoid);
    },
    started() {},
    ended() {},
  };
}
