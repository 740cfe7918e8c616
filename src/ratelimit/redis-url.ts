/**
 * `--redis-url` forms:
 * - `redis://[[user]:password@]host[:port][/db]` (and `rediss://` for TLS): one server;
 * - `redis-sentinel://[[user]:password@]host:port[,host:port…][/db]?name=<master>[&sentinelPassword=…]`:
 *   the master that Sentinels name (`rediss-sentinel://` for TLS);
 * - `redis-cluster://[[user]:password@]host:port[,host:port…]` (`rediss-cluster://` for TLS): seed nodes.
 * Hosts may be bracketed IPv6 (`[::1]:6379`). The default port is 6379, or 26379 for Sentinels.
 */

export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

interface Auth {
  readonly username?: string;
  readonly password?: string;
  readonly tls: boolean;
}

export type RedisTarget =
  | ({ readonly kind: "standalone"; readonly node: RedisNode; readonly db: number } & Auth)
  | ({
      readonly kind: "sentinel";
      readonly sentinels: readonly RedisNode[];
      readonly name: string;
      readonly db: number;
      readonly sentinelPassword?: string;
    } & Auth)
  | ({ readonly kind: "cluster"; readonly nodes: readonly RedisNode[] } & Auth);

const shape =
  /^(rediss?|rediss?-sentinel|rediss?-cluster):\/\/(?:([^@/]*)@)?([^/?]+)(?:\/(\d*))?(?:\?(.*))?$/;

/** The target a URL names, or a message saying what is wrong with it (never throws). */
export function parseRedisUrl(url: string): RedisTarget | { readonly error: string } {
  const m = shape.exec(url.trim());
  if (!m) return { error: `"${redact(url)}" is not a redis://, redis-sentinel:// or redis-cluster:// URL` };
  const scheme = m[1] as string;
  const auth = parseAuth(m[2], scheme.startsWith("rediss"));
  const query = new URLSearchParams(m[5] ?? "");
  const db = m[4] ? Number(m[4]) : 0;
  const kind = scheme.endsWith("-sentinel")
    ? "sentinel"
    : scheme.endsWith("-cluster")
      ? "cluster"
      : "standalone";
  const nodes: RedisNode[] = [];
  for (const part of (m[3] as string).split(",")) {
    const node = parseNode(part, kind === "sentinel" ? 26379 : 6379);
    if (!node) return { error: `"${part}" in the Redis URL is not host[:port]` };
    nodes.push(node);
  }
  if (kind === "standalone") {
    if (nodes.length !== 1) return { error: "redis:// names one server; use redis-cluster:// for several" };
    return { kind, node: nodes[0] as RedisNode, db, ...auth };
  }
  if (kind === "cluster") {
    if (db !== 0) return { error: "Redis Cluster has only database 0" };
    return { kind, nodes, ...auth };
  }
  const name = query.get("name") ?? "";
  if (name === "") return { error: "redis-sentinel:// needs ?name=<master name>" };
  const sentinelPassword = query.get("sentinelPassword") ?? undefined;
  return { kind, sentinels: nodes, name, db, ...auth, ...(sentinelPassword ? { sentinelPassword } : {}) };
}

function parseAuth(userinfo: string | undefined, tls: boolean): Auth {
  if (userinfo === undefined || userinfo === "") return { tls };
  const colon = userinfo.indexOf(":");
  const user = decodeURIComponent(colon < 0 ? "" : userinfo.slice(0, colon));
  const password = decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(colon + 1));
  return { tls, ...(user ? { username: user } : {}), ...(password ? { password } : {}) };
}

function parseNode(text: string, defaultPort: number): RedisNode | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(text.trim());
  if (!m) return undefined;
  const port = m[3] ? Number(m[3]) : defaultPort;
  if (port < 1 || port > 65535) return undefined;
  return { host: (m[1] ?? m[2]) as string, port };
}

/** The URL with its password replaced, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/\/\/([^@/]*:)?[^@/]*@/, (_all, user?: string) => `//${user ?? ""}***@`);
}
