/**
 * Where each Gateway binds: its own `spec.addresses`, else an address of the `--gateway-address-pool`
 * (an IPv4 CIDR), else the process-wide bind address.
 */
import type * as Os from "node:os";
import { isIP, isIPv4 } from "../../model/ip-syntax.ts";
import type { Gateway } from "../../sources/schema/gateway.ts";
import { arrayOf, nameOf, namespaceOf } from "../common/objects.ts";
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

/** Where a Gateway's listeners bind. */
export type GatewayAddress =
  /** `address` "" means the process-wide `--bind` address (no pool, no static address). */
  | { readonly kind: "assigned"; readonly address: string; readonly reported: boolean }
  /** spec.addresses asks for something we cannot bind (Accepted False UnsupportedAddress). */
  | { readonly kind: "unsupported"; readonly message: string }
  /** The pool has no free address left (Programmed False AddressNotAssigned). */
  | { readonly kind: "exhausted"; readonly message: string }
  /** spec.addresses names an address this gateway cannot bind (Programmed False AddressNotUsable). */
  | { readonly kind: "unusable"; readonly message: string };

let localAddresses: ReadonlySet<string> | undefined;

/**
 * Whether this gateway can bind `ip` itself: it is in the pool, a loopback address, or one of this host's
 * interfaces (read once per process). Asked only with a pool, where Gatehouse binds Gateways' addresses;
 * without one (a cluster's load balancers own them) every IP is taken as given.
 */
function bindable(ip: string, pool: AddressPool): boolean {
  if (poolContains(pool, ip) || ip === "::1" || (isIPv4(ip) && ip.startsWith("127."))) return true;
  // Loaded only here: translate's start-up stays free of node modules it rarely needs (startup.test.ts).
  const { networkInterfaces } = require("node:os") as typeof Os;
  localAddresses ??= new Set(
    Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address)),
  );
  return localAddresses.has(ip);
}

/**
 * Addresses for our Gateways, keyed `<ns>/<name>`:
 * 1. `spec.addresses` when given: each type must be IPAddress (the default) and each value an IP address
 *    (else UnsupportedAddress). With a pool, an address this gateway cannot bind (not in the pool, not
 *    loopback, not on this host) leaves the Gateway Accepted but not Programmed (AddressNotUsable), as
 *    the spec says every listener MUST be bound to every address. One Gateway binds one address: more
 *    than one bindable address is refused (UnsupportedAddress) rather than half served. The one address is
 *    used as is and kept out of the pool for others.
 * 2. A single entry without a value (GatewayAddressEmpty), or none: an address of `pool`, stable per
 *    Gateway (see allocateAddresses).
 * 3. Without a pool: "" — the process-wide bind address, which status does not report (we do not know it).
 * A malformed pool is treated as absent, and reported by the caller.
 */
export function assignAddresses(
  gateways: readonly Gateway[],
  pool: string | undefined,
): Map<string, GatewayAddress> {
  const out = new Map<string, GatewayAddress>();
  const dynamic: string[] = [];
  const taken = new Set<string>();
  const parsed = pool ? parsePool(pool) : undefined;
  for (const gw of gateways) {
    const key = `${namespaceOf(gw)}/${nameOf(gw)}`;
    const given = arrayOf(gw.spec?.addresses);
    const first = given[0];
    if (!first || (given.length === 1 && !first.value && (first.type ?? "IPAddress") === "IPAddress")) {
      dynamic.push(key);
      continue;
    }
    const wrong = given.findIndex(
      (a) => (a.type ?? "IPAddress") !== "IPAddress" || !a.value || isIP(a.value) === 0,
    );
    const unbindable = parsed ? given.find((a) => !bindable(a.value as string, parsed)) : undefined;
    if (wrong >= 0) {
      const a = given[wrong] as (typeof given)[number];
      out.set(key, {
        kind: "unsupported",
        message:
          (a.type ?? "IPAddress") !== "IPAddress"
            ? `spec.addresses[${wrong}].type "${a.type}" is not supported; only IPAddress`
            : `spec.addresses[${wrong}].value "${a.value ?? ""}" is not an IP address`,
      });
    } else if (unbindable) {
      out.set(key, {
        kind: "unusable",
        message: `spec.addresses: ${unbindable.value} cannot be bound here (not in the address pool ${pool}, not on this host)`,
      });
    } else if (given.length > 1) {
      out.set(key, {
        kind: "unsupported",
        message: `spec.addresses: ${given.length} addresses requested; a Gateway binds only one`,
      });
    } else {
      out.set(key, { kind: "assigned", address: first.value as string, reported: true });
      taken.add(first.value as string);
    }
  }
  const allocated = parsed ? allocateAddresses(parsed, dynamic, taken) : new Map<string, string>();
  for (const key of dynamic) {
    const ip = allocated.get(key);
    if (!parsed) out.set(key, { kind: "assigned", address: "", reported: false });
    else if (ip) out.set(key, { kind: "assigned", address: ip, reported: true });
    else out.set(key, { kind: "exhausted", message: `the address pool ${pool} has no free address left` });
  }
  return out;
}
