/**
 * Never silent: settings only the raw front enforces, named when `--front bun` is asked for with them
 * (Bun.serve has no hook to refuse a connection, no read-gap clock, no socket to share with a
 * passthrough listener; docs/http.md lists these as written exceptions). `--proxy-protocol` is refused
 * outright there: Bun.serve would parse the PROXY header as a request, so no client would be served.
 */
import type { ProxyProtocolListeners } from "../client/proxy-preamble.ts";

/** The GatewayServer options (server.ts) only the raw front enforces. */
export interface RawFrontOnlyOptions {
  readonly sharedTlsPorts?: boolean;
  readonly maxConnections?: number;
  readonly maxConnectionsPerPeer?: number;
  readonly upstreamReadTimeoutMs?: number;
}

/** The flag behind each such setting that `options` sets, for a warning at start. */
export function unenforcedOnBunFront(options: RawFrontOnlyOptions, defaultMaxConnections: number): string[] {
  const out: string[] = [];
  if (options.sharedTlsPorts) out.push("--enable-ssl-passthrough");
  const max = options.maxConnections;
  if (max !== undefined && max > 0 && max !== defaultMaxConnections) out.push("--max-connections");
  if ((options.maxConnectionsPerPeer ?? 0) > 0) out.push("--max-connections-per-peer");
  if (options.upstreamReadTimeoutMs !== undefined) out.push("--upstream-read-timeout-ms");
  return out;
}

/** Why `--proxy-protocol` cannot be served as asked (undefined: it can). */
export function proxyProtocolRefusal(
  options: {
    readonly proxyProtocol?: ProxyProtocolListeners;
    readonly trustedProxies?: readonly string[];
    readonly proxyProtocolFrom?: readonly string[];
  },
  front: "raw" | "bun",
): string | undefined {
  const p = options.proxyProtocol;
  if (p === undefined || p === "none" || (Array.isArray(p) && p.length === 0)) return undefined;
  if (front === "bun")
    return "--proxy-protocol needs --front raw: Bun.serve cannot read a PROXY header (docs/http.md)";
  if ((options.proxyProtocolFrom?.length ?? 0) === 0 && (options.trustedProxies?.length ?? 0) === 0)
    return "--proxy-protocol needs --proxy-protocol-from (or --trusted-proxies): only the load balancers named there may send a PROXY header";
  return undefined;
}

/**
 * The warning for `--proxy-protocol` on some ports only with the PROXY senders left to default to
 * `--trusted-proxies` (undefined: none): a balancer trusted there is also believed when it reaches a port
 * without PROXY and sends X-Forwarded-For, which a client of a TCP balancer writes itself.
 */
export function proxyProtocolFromWarning(options: {
  readonly proxyProtocol?: ProxyProtocolListeners;
  readonly trustedProxies?: readonly string[];
  readonly proxyProtocolFrom?: readonly string[];
}): string | undefined {
  const p = options.proxyProtocol;
  if (!Array.isArray(p) || p.length === 0 || (options.proxyProtocolFrom?.length ?? 0) > 0) return undefined;
  if ((options.trustedProxies?.length ?? 0) === 0) return undefined;
  return `--proxy-protocol names only some ports (${p.join(",")}) and --proxy-protocol-from is empty, so --trusted-proxies says who may send a PROXY header: a load balancer trusted there that also reaches another port is believed when its connections carry X-Forwarded-For, which its clients write. Name the balancer in --proxy-protocol-from and take it out of --trusted-proxies`;
}

/**
 * Never silent: the `--proxy-protocol` ports no listener of the model has (`ports`, as the model names
 * them), which read nothing; "all" and "none" name no port.
 */
export function unmatchedProxyProtocolPorts(
  setting: ProxyProtocolListeners | undefined,
  ports: Iterable<number>,
): number[] {
  if (setting === undefined || !Array.isArray(setting)) return [];
  const have = new Set(ports);
  return (setting as readonly number[]).filter((p) => !have.has(p));
}
