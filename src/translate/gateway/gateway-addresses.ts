import { isIP } from "node:net";
import type { Gateway } from "../../sources/schema/gateway.ts";
import { arrayOf, nameOf, namespaceOf } from "../common/objects.ts";
import { allocateAddresses, parsePool } from "./addresses.ts";

/** Where a Gateway's listeners bind. */
export type GatewayAddress =
  /** `address` "" means the process-wide `--bind` address (no pool, no static address). */
  | { readonly kind: "assigned"; readonly address: string; readonly reported: boolean }
  /** spec.addresses asks for something we cannot bind (Accepted False UnsupportedAddress). */
  | { readonly kind: "unsupported"; readonly message: string }
  /** The pool has no free address left (Programmed False AddressNotAssigned). */
  | { readonly kind: "exhausted"; readonly message: string };

/**
 * Addresses for our Gateways, keyed `<ns>/<name>`:
 * 1. `spec.addresses[0]` when given: its type must be IPAddress (the default) and its value an IP
 *    address; it is used as is, in the pool or not (binding it is the operator's business) and kept out
 *    of the pool for others. Further addresses are ignored: one Gateway binds one address.
 * 2. Otherwise an address of `pool`, stable per Gateway (see allocateAddresses).
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
  for (const gw of gateways) {
    const key = `${namespaceOf(gw)}/${nameOf(gw)}`;
    const first = arrayOf(gw.spec?.addresses)[0];
    if (!first) {
      dynamic.push(key);
      continue;
    }
    const type = first.type ?? "IPAddress";
    if (type !== "IPAddress") {
      out.set(key, {
        kind: "unsupported",
        message: `spec.addresses[0].type "${type}" is not supported; only IPAddress`,
      });
    } else if (!first.value || isIP(first.value) === 0) {
      out.set(key, {
        kind: "unsupported",
        message: `spec.addresses[0].value "${first.value ?? ""}" is not an IP address`,
      });
    } else {
      out.set(key, { kind: "assigned", address: first.value, reported: true });
      taken.add(first.value);
    }
  }
  const parsed = pool ? parsePool(pool) : undefined;
  const allocated = parsed ? allocateAddresses(parsed, dynamic, taken) : new Map<string, string>();
  for (const key of dynamic) {
    const ip = allocated.get(key);
    if (!parsed) out.set(key, { kind: "assigned", address: "", reported: false });
    else if (ip) out.set(key, { kind: "assigned", address: ip, reported: true });
    else out.set(key, { kind: "exhausted", message: `the address pool ${pool} has no free address left` });
  }
  return out;
}
