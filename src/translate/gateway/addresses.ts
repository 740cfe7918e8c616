import { isIPv4 } from "node:net";
import { compareStrings } from "../common/sort.ts";

/** An IPv4 CIDR pool: its usable host addresses as numbers. */
export interface AddressPool {
  readonly cidr: string;
  /** First usable address (network address + 1 when the prefix leaves room for one). */
  readonly first: number;
  /** Number of usable addresses. */
  readonly size: number;
}

/**
 * Parse `a.b.c.d/n` (IPv4 only). The network and broadcast addresses are left out when the prefix is
 * /30 or shorter, as a router would; /31 and /32 use every address. Undefined when malformed.
 */
export function parsePool(cidr: string): AddressPool | undefined {
  const m = /^([0-9.]+)\/(\d{1,2})$/.exec(cidr.trim());
  if (!m || !isIPv4(m[1] as string)) return undefined;
  const prefix = Number(m[2]);
  if (prefix > 32) return undefined;
  const total = 2 ** (32 - prefix);
  const network = Math.floor(ipToNumber(m[1] as string) / total) * total;
  const skipEnds = prefix <= 30;
  return { cidr, first: network + (skipEnds ? 1 : 0), size: skipEnds ? total - 2 : total };
}

export function ipToNumber(ip: string): number {
  return ip.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

export function numberToIp(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");
}

export function poolContains(pool: AddressPool, ip: string): boolean {
  if (!isIPv4(ip)) return false;
  const n = ipToNumber(ip);
  return n >= pool.first && n < pool.first + pool.size;
}

/** FNV-1a, 32 bits: a fixed hash so an address depends on the Gateway's name and nothing else. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * Give each key (`<ns>/<name>` of a Gateway) an address of the pool. Each key starts at the slot its hash
 * picks and probes upwards (wrapping) past taken slots; keys are placed in sorted order, so the result
 * does not depend on input order, and adding a Gateway moves no other one unless their probes collide.
 * `taken` addresses (static `spec.addresses` of other Gateways) are never handed out.
 * Keys that find no free slot (pool exhausted) are absent from the result.
 */
export function allocateAddresses(
  pool: AddressPool,
  keys: readonly string[],
  taken: ReadonlySet<string> = new Set(),
): Map<string, string> {
  const used = new Set<number>();
  for (const ip of taken) if (poolContains(pool, ip)) used.add(ipToNumber(ip) - pool.first);
  const out = new Map<string, string>();
  for (const key of [...new Set(keys)].sort(compareStrings)) {
    if (used.size >= pool.size) break;
    let slot = fnv1a(key) % pool.size;
    while (used.has(slot)) slot = (slot + 1) % pool.size;
    used.add(slot);
    out.set(key, numberToIp(pool.first + slot));
  }
  return out;
}
