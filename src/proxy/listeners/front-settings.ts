/**
 * Never silent: settings only the raw front enforces, named when `--front bun` is asked for with them
 * (Bun.serve has no hook to refuse a connection, no read-gap clock, no socket to share with a
 * passthrough listener; docs/http.md lists these as written exceptions).
 */

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
