/**
 * Misdirected requests (RFC 9110 §15.5.20, Gateway API feature GatewayHTTPSListenerDetectMisdirectedRequests).
 * HTTP/2 clients reuse one TLS connection for every name its certificate covers (connection
 * coalescing), so a request's `:authority` can belong to another listener than the one the handshake's
 * SNI chose — a listener with other routes, maybe another certificate or policy. Such a request gets 421
 * and the client retries on a connection of its own.
 *
 * Several model listeners served on one socket are told apart by their own hostnames: a name belongs to
 * the listener with the equal hostname, else the one with the longest matching wildcard (`*.foo.com`
 * covers any number of labels, as Gateway API listener hostnames do), else the listener without a
 * hostname; -1 when none does.
 */
import { specificity } from "../listeners/listener-merge.ts";
import { normaliseHost } from "../match/host.ts";
import { normaliseServername } from "../match/servername.ts";
import { textResponse } from "../request/responses.ts";
import type { ListenerTable } from "../table.ts";

/** Index into `hostnames` of the listener that owns `name` (lower-case, no port); -1 for none. */
export function owningListener(hostnames: readonly (string | undefined)[], name: string): number {
  let best = -1;
  let bestScore = -2;
  for (let i = 0; i < hostnames.length; i++) {
    const h = hostnames[i];
    const covers = h === undefined || h === name || (h.startsWith("*.") && name.endsWith(h.slice(1)));
    if (!covers) continue;
    const score = specificity(h);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Whether a request for `host` on a connection whose SNI was `servername` must be refused with 421.
 * A connection without SNI (an IP address) cannot be misdirected: its requests are routed by Host.
 */
export function isMisdirected(
  hostnames: readonly (string | undefined)[],
  servername: string | undefined,
  host: string,
): boolean {
  if (!servername) return false;
  const sni = normaliseServername(servername);
  if (sni === host) return false;
  return owningListener(hostnames, sni) !== owningListener(hostnames, host);
}

/** The 421 check both HTTP/2 servers make: a request for `authority` on a TLS connection whose SNI was `servername`. */
export function misdirectedOn(
  table: ListenerTable,
  servername: string | false | null | undefined,
  authority: string,
): boolean {
  return isMisdirected(
    table.memberHostnames ?? [table.hostname],
    servername || undefined,
    normaliseHost(authority),
  );
}

export function misdirectedResponse(serverHeader: string): Response {
  return textResponse(421, "Misdirected Request\n", serverHeader);
}
