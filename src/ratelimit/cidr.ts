import { isIP } from "../model/ip-syntax.ts";

/**
 * `a.b.c.d/n`, `x::y/n`, or a bare address (a /32 or /128); undefined when malformed. Apart from
 * client-ip.ts because translation checks policies' CIDRs with it, and node:net (which client-ip.ts
 * needs for its BlockList) is not loaded by `gatehouse translate`.
 */
export function parseCidr(
  cidr: string,
): { address: string; prefix: number; family: "ipv4" | "ipv6" } | undefined {
  const [address = "", bits, extra] = cidr.trim().split("/");
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (!(prefix >= 0 && prefix <= max)) return undefined;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}
