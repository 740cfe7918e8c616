/**
 * Who the client is, one definition for every guard, rate-limit key, access log line and the
 * X-Forwarded-For sent upstream (both fronts). The peer is the address the connection came from: the
 * socket's, or the source a PROXY header named (proxy-protocol.ts). When the peer is one of
 * `--trusted-proxies`, X-Forwarded-For is walked right to left past trusted addresses and the first
 * untrusted one is the client (ingress-nginx `real_ip_recursive on` with `proxy-real-ip-cidr`, Envoy's
 * `xffNumTrustedHops` by address instead of by count); from any other peer the header is never believed,
 * nor on a listener that reads PROXY headers (settings.ts forwardedForTrust): there the header names the
 * client. An unreadable entry makes the client unknown ("", refused by IP lists).
 */
import type { BlockList } from "node:net";
import { cidrSet, clientAddress, inSet, normaliseAddress } from "../../ratelimit/client-ip.ts";

export class TrustedProxies {
  private readonly set: BlockList | undefined;

  constructor(readonly cidrs: readonly string[]) {
    this.set = cidrSet(cidrs);
  }

  /** No proxy is trusted: every peer is the client. */
  get none(): boolean {
    return this.set === undefined;
  }

  /** `address` (normalised: no port, IPv4-mapped IPv6 as IPv4) is a trusted proxy. */
  trusts(address: string): boolean {
    return this.set !== undefined && inSet(this.set, address);
  }

  /** The client of a request from `peer` carrying `xff` (all X-Forwarded-For values joined, or null). */
  client(peer: string, xff: string | null): string {
    return clientAddress(peer, xff, this.set);
  }
}

/** The peer as every consumer compares it: trimmed, no port or brackets, IPv4-mapped IPv6 as IPv4. */
export const normalisePeer = normaliseAddress;

/**
 * The X-Forwarded-For sent upstream: a trusted peer's chain with the peer appended (ingress-nginx's
 * `compute-full-forwarded-for`, Envoy's append); from any other peer the peer alone (ingress-nginx's
 * default `X-Forwarded-For: $remote_addr`), so a client cannot plant addresses for a backend to believe.
 */
export function forwardedFor(peer: string, xff: string | null, peerTrusted: boolean): string {
  return peerTrusted && xff !== null && xff !== "" ? `${xff}, ${peer}` : peer;
}
