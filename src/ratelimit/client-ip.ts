/**
 * The client address a limit is keyed on. X-Forwarded-For is believed only as far as a chain of trusted
 * proxies vouches for it: a client that sends a forged X-Forwarded-For straight to us (an untrusted
 * peer) is limited by its real address.
 */
import { BlockList, isIP } from "node:net";
import { parseCidr } from "./cidr.ts";

export { parseCidr };

/** A set of CIDRs (IPv4 and IPv6), compiled once per configuration. Undefined when empty. */
export function cidrSet(cidrs: readonly string[]): BlockList | undefined {
  if (cidrs.length === 0) return undefined;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const parsed = parseCidr(cidr);
    if (parsed) list.addSubnet(parsed.address, parsed.prefix, parsed.family);
  }
  return list;
}

export function inSet(set: BlockList | undefined, address: string): boolean {
  if (set === undefined) return false;
  const version = isIP(address);
  if (version === 0) return false;
  return set.check(address, version === 4 ? "ipv4" : "ipv6");
}

/**
 * Walk from the socket peer leftwards through X-Forwarded-For while the current hop is a trusted proxy;
 * the first untrusted hop is the client. An entry that is not an address makes the client unknown (""):
 * not the trusted hop that passed it on, which an allow list covering the proxies would admit. Guards
 * refuse "" (auth/ip-access.ts: never open); a rate limit keys such a request by its peer (enforce.ts).
 */
export function clientAddress(peer: string, xff: string | null, trusted: BlockList | undefined): string {
  let current = normaliseAddress(peer);
  if (trusted === undefined || xff === null || !inSet(trusted, current)) return current;
  const hops = xff.split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normaliseAddress(hops[i] as string);
    if (isIP(hop) === 0) return "";
    current = hop;
    if (!inSet(trusted, current)) return current;
  }
  return current;
}

/** Trimmed, without `[]` or a port, IPv4-mapped IPv6 written as IPv4 (so one client has one key). */
export function normaliseAddress(raw: string): string {
  let a = raw.trim();
  if (a.startsWith("[")) a = a.slice(1, a.indexOf("]") > 0 ? a.indexOf("]") : undefined);
  else if (a.indexOf(":") > 0 && a.indexOf(":") === a.lastIndexOf(":")) a = a.slice(0, a.indexOf(":"));
  if (a.startsWith("::ffff:") && isIP(a.slice(7)) === 4) a = a.slice(7);
  return a;
}
