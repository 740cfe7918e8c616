import { parseRange } from "../model/ip-ranges.ts";
import { isIP } from "../model/ip-syntax.ts";

/**
 * `a.b.c.d/n`, `x::y/n`, or a bare address (a /32 or /128); undefined when malformed. Apart from
 * client-ip.ts because translation checks policies' CIDRs with it, and node:net (which client-ip.ts
 * needs for its BlockList) is not loaded by `gatehouse translate`. The grammar is the address lists'
 * (model/ip-ranges.ts `parseRange`: no `/08`), so --trusted-proxies, --proxy-protocol-from and a
 * RateLimitPolicy's trustedProxies take exactly what an AuthPolicy's lists take.
 */
export function parseCidr(
  cidr: string,
): { address: string; prefix: number; family: "ipv4" | "ipv6" } | undefined {
  const text = cidr.trim();
  if (parseRange(text) === undefined) return undefined;
  const [address = "", bits] = text.split("/");
  const version = isIP(address);
  if (version === 0) return undefined;
  const prefix = bits === undefined ? (version === 4 ? 32 : 128) : Number(bits);
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}
