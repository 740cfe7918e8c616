/**
 * Guards section: what an AuthPolicy (JWT, valid token) and a RateLimitPolicy that is never exceeded
 * (Redis, through --redis-url) cost, against the same request on a route with neither, in one gateway
 * process, rounds alternating. Every request carries the same Authorization header so the token rows
 * differ only by what the gateway does with it. Basic auth (a bcrypt user, ingress-nginx annotations) and
 * an API key send their own credential instead; an ingress-nginx allow list naming the client is the `ip list` row;
 * `forward auth` asks a service in this process on every request (`+cache`: once, auth-cache-key); basic+flood measures the valid user while wrong passwords
 * pour in (guards-credentials.ts). Redis commands per limited request come from
 * `INFO commandstats` before and after the limited runs.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { signToken, testKey } from "../src/auth/testing/keys.ts";
import { freePort } from "../test/helpers/ports.ts";
import type { RedisServer } from "../test/helpers/redis.ts";
import type { BenchContext } from "./context.ts";
import {
  type CredentialSetup,
  credentialHosts,
  credentialSetup,
  floodSummary,
  startFlood,
} from "./guards-credentials.ts";
import { measuredRun, type Run, targetPids } from "./procs.ts";
import { wrkTable } from "./proxy.ts";
import { median } from "./stats.ts";

const ns = "bench";
const issuer = "https://issuer.bench.test";
const hosts = {
  open: "open.bench.test",
  jwt: "jwt.bench.test",
  /** The JWT route again, with the token's `sub` forwarded as a header (claimToHeaders). */
  claims: "claims.bench.test",
  limited: "limited.bench.test",
  /** A limit of 1 per hour: its second request must be refused if the limiter is in the request path. */
  probe: "probe.bench.test",
  /** ingress-nginx allowlist-source-range naming the bench's loopback client, and one that refuses it. */
  listed: "listed.bench.test",
  unlisted: "unlisted.bench.test",
  /** ingress-nginx auth-url to a service in the bench process; again with auth-cache-key (one check). */
  forward: "forward.bench.test",
  forwardCached: "forward-cached.bench.test",
} as const;

function ingress(name: string, host: string, annotations: Record<string, string> = {}) {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: ns, annotations },
    spec: {
      ingressClassName: "gatehouse",
      rules: [
        {
          host,
          http: {
            paths: [
              {
                path: "/",
                pathType: "Prefix",
                backend: { service: { name: "backend", port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  };
}

function rateLimitPolicy(name: string, target: string, limit: number, window: string) {
  return {
    apiVersion: "gatehouse.dev/v1alpha1",
    kind: "RateLimitPolicy",
    metadata: { name, namespace: ns },
    spec: {
      targetRefs: [{ group: "networking.k8s.io", kind: "Ingress", name: target }],
      rules: [{ limit, window }],
    },
  };
}

/** A JWT AuthPolicy on Ingress `target` (keys from the `jwks` Secret), with `extra` spec fields. */
function authPolicy(name: string, target: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "gatehouse.dev/v1alpha1",
    kind: "AuthPolicy",
    metadata: { name, namespace: ns },
    spec: {
      targetRefs: [{ group: "networking.k8s.io", kind: "Ingress", name: target }],
      jwt: {
        providers: [
          {
            name: "bench",
            issuer,
            audiences: ["bench"],
            keys: { type: "Secret", secretRef: { name: "jwks" } },
          },
        ],
      },
      ...extra,
    },
  };
}

/**
 * The folder: five Ingresses on one backend, two AuthPolicies with keys from a Secret, two limits, and the
 * basic-auth and API-key routes of `credentials` (guards-credentials.ts).
 */
export function guardManifests(
  upstreamPort: number,
  jwks: unknown,
  credentials?: CredentialSetup,
  /** The forward-auth service's check URL; absent: no forward-auth routes. */
  forwardAuth?: string,
): string {
  const forward = (extra: Record<string, string> = {}) => ({
    "nginx.ingress.kubernetes.io/auth-url": forwardAuth ?? "",
    "nginx.ingress.kubernetes.io/auth-response-headers": "X-Auth-Request-User",
    ...extra,
  });
  const docs = [
    {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "gatehouse" },
      spec: { controller: "gatehouse.dev/ingress-controller" },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "backend", namespace: ns },
      spec: { ports: [{ name: "http", port: 80, targetPort: upstreamPort }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "backend-1", namespace: ns, labels: { "kubernetes.io/service-name": "backend" } },
      addressType: "IPv4",
      endpoints: [{ addresses: ["127.0.0.1"], conditions: { ready: true } }],
      ports: [{ name: "http", port: upstreamPort }],
    },
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "jwks", namespace: ns },
      stringData: { jwks: JSON.stringify(jwks) },
    },
    authPolicy("jwt", "jwt"),
    authPolicy("jwt-claims", "claims", { claimToHeaders: [{ claim: "sub", header: "X-User" }] }),
    ingress("open", hosts.open),
    ingress("jwt", hosts.jwt),
    ingress("claims", hosts.claims),
    ingress("limited", hosts.limited),
    ingress("probe", hosts.probe),
    ingress("listed", hosts.listed, {
      "nginx.ingress.kubernetes.io/allowlist-source-range": "127.0.0.0/8,::1",
    }),
    ingress("unlisted", hosts.unlisted, {
      "nginx.ingress.kubernetes.io/allowlist-source-range": "192.0.2.0/24",
    }),
    rateLimitPolicy("never-reached", "limited", 1_000_000_000, "1s"),
    rateLimitPolicy("one-per-hour", "probe", 1, "1h"),
    ...(forwardAuth === undefined
      ? []
      : [
          ingress("forward", hosts.forward, forward()),
          ingress(
            "forward-cached",
            hosts.forwardCached,
            forward({
              "nginx.ingress.kubernetes.io/auth-cache-key": "$http_authorization",
              "nginx.ingress.kubernetes.io/auth-cache-duration": "200 10m",
            }),
          ),
        ]),
    ...(credentials?.docs ?? []),
    ...(credentials?.ingresses ?? []).map(([name, host, annotations]) => ingress(name, host, annotations)),
  ];
  return docs.map((d) => stringify(d)).join("---\n");
}

/** Sum of `calls=` over every command in an `INFO commandstats` reply, except INFO itself. */
export function commandCalls(info: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const name = m[1] as string;
    if (name !== "info") out.set(name, Number(m[2]));
  }
  return out;
}

async function redisCalls(redis: RedisServer): Promise<Map<string, number>> {
  // The helper reads one bulk reply; commandstats is small enough to arrive whole.
  return commandCalls(await redis.command("INFO", "commandstats"));
}

export async function guardsSection(ctx: BenchContext): Promise<string> {
  const { settings, procs } = ctx;
  const dir = join(ctx.work, "guards");
  await mkdir(dir, { recursive: true });
  const key = await testKey("ES256", "bench-1");
  const credentials = await credentialSetup(ns);
  // The forward-auth service: admits everyone with a user header (the cost measured is the sub-request).
  let checks = 0;
  const authService = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => {
      checks++;
      return new Response(null, { status: 200, headers: { "x-auth-request-user": "bench" } });
    },
  });
  await writeFile(
    join(dir, "guards.yaml"),
    guardManifests(
      ctx.backendPort,
      { keys: [key.publicJwk] },
      credentials,
      `http://127.0.0.1:${authService.port}/check`,
    ),
  );
  const token = await signToken(key, { iss: issuer, aud: "bench", sub: "bench-user" });
  const redis = await procs.redis();
  const port = await freePort();
  const gw = await procs.gatehouse({
    dir,
    port,
    workers: 1,
    ready: { probe: "/", host: hosts.open },
    extra: ["--redis-url", redis.url],
  });
  const out = [
    `one gateway process (--workers 1, --redis-url to a local redis-server); every request carries the same ${token.length}-byte bearer token; wrk -t1 -c${settings.connections} -d${settings.seconds}s; ${settings.rounds} round(s)`,
  ];
  try {
    const auth = { authorization: `Bearer ${token}` };
    const get = (host: string, headers: Record<string, string> = {}) =>
      fetch(`${gw.url}/`, { headers: { host, ...headers } }).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      });
    // The rows only mean something if the guards really run: check before timing.
    if ((await get(hosts.jwt)) !== 401) throw new Error("guards: the JWT route answers without a token");
    if ((await get(hosts.unlisted)) !== 403 || (await get(hosts.listed)) !== 200)
      throw new Error("guards: the client address lists are not checked");
    const checked = checks;
    if ((await get(hosts.forward)) !== 200 || checks !== checked + 1)
      throw new Error("guards: the forward-auth route does not ask its service");
    if ((await get(hosts.jwt, auth)) !== 200) throw new Error("guards: the JWT route refuses a valid token");
    if ((await get(hosts.claims)) !== 401)
      throw new Error("guards: the claims route answers without a token");
    if ((await get(hosts.claims, auth)) !== 200)
      throw new Error("guards: the claims route refuses a valid token");
    if (
      (await get(credentialHosts.basic)) !== 401 ||
      (await get(credentialHosts.basic, credentials.basicHeaders)) !== 200
    )
      throw new Error("guards: the basic-auth route does not check its user");
    if (
      (await get(credentialHosts.apiKey)) !== 401 ||
      (await get(credentialHosts.apiKey, credentials.keyHeaders)) !== 200
    )
      throw new Error("guards: the API-key route does not check its key");
    await get(hosts.probe);
    const limiterLive = (await get(hosts.probe)) === 429;
    if (!limiterLive)
      out.push(
        "NOTE: the rate limiter is not in the request path of this tree (a 1-per-hour route admitted two requests); the rate-limit row measures a route that only carries the policy",
      );
    const samples = new Map<string, Run[]>();
    const pids = await targetPids(gw);
    let limitedRequests = 0;
    let limitedCalls = new Map<string, number>();
    // basic+flood: the valid user again while 64 loops here send wrong passwords (each a bcrypt to verify).
    const rows: { name: string; host: string; headers?: Record<string, string>; flood?: true }[] = [
      { name: "no guard", host: hosts.open },
      { name: "jwt", host: hosts.jwt },
      { name: "jwt+claims", host: hosts.claims },
      { name: "rate limit", host: hosts.limited },
      { name: "ip list", host: hosts.listed },
      { name: "basic", host: credentialHosts.basic, headers: credentials.basicHeaders },
      { name: "basic+flood", host: credentialHosts.basic, headers: credentials.basicHeaders, flood: true },
      { name: "api key", host: credentialHosts.apiKey, headers: credentials.keyHeaders },
      { name: "forward auth", host: hosts.forward },
      { name: "forward auth+cache", host: hosts.forwardCached },
    ];
    const floods: string[] = [];
    for (let r = 0; r < settings.rounds; r++) {
      for (const row of r % 2 === 0 ? rows : [...rows].reverse()) {
        const before = row.host === hosts.limited ? await redisCalls(redis) : undefined;
        const flood = row.flood ? startFlood(`${gw.url}/`, row.host, 64) : undefined;
        const res = await measuredRun(`guards: ${row.name}`, pids, {
          url: `${gw.url}/`,
          seconds: settings.seconds,
          connections: settings.connections,
          threads: 1,
          headers: { Host: row.host, ...(row.headers ?? auth) },
        }).finally(async () => {
          if (flood) floods.push(floodSummary(await flood.stop()));
        });
        samples.set(row.name, [...(samples.get(row.name) ?? []), res]);
        if (before !== undefined) {
          limitedRequests += res.requests;
          limitedCalls = addDiff(limitedCalls, before, await redisCalls(redis));
        }
      }
    }
    out.push(wrkTable(samples, "no guard"));
    const total = [...limitedCalls.values()].reduce((a, b) => a + b, 0);
    // commandstats also counts what a Lua script calls inside Redis; the client's round trips are the
    // script calls themselves.
    const scripts = ["evalsha", "eval", "evalsha_ro", "eval_ro"].reduce(
      (n, c) => n + (limitedCalls.get(c) ?? 0),
      0,
    );
    const detail = [...limitedCalls].map(([k, v]) => `${k} ${v}`).join(", ") || "none";
    const per = (n: number) => (n / Math.max(1, limitedRequests)).toFixed(3);
    out.push(
      `redis per rate-limited request: ${per(scripts)} script calls (round trips); ${per(total)} commands counting those run inside the script (${limitedRequests} requests: ${detail})`,
    );
    const ratio = (name: string) =>
      median((samples.get(name) ?? []).map((s) => s.rps)) /
      median((samples.get("no guard") ?? []).map((s) => s.rps));
    const p99 = (name: string) => median((samples.get(name) ?? []).map((s) => s.p99Ms)).toFixed(2);
    out.push(
      `basic auth under a flood of wrong passwords (64 loops in the bench process, answers per round: ${floods.join(" | ")}): valid user's p99 ${p99("basic+flood")} ms beside ${p99("basic")} ms without`,
    );
    out.push(
      `forward auth: ${checks} checks answered by the service in the bench process (it shares the machine's cores with the gateway and wrk); cached → ${ratio("forward auth+cache").toFixed(2)}×, uncached → ${ratio("forward auth").toFixed(2)}×`,
    );
    out.push(
      `goals: basic ≥ 0.90× → ${ratio("basic").toFixed(2)}×; ip list → ${ratio("ip list").toFixed(2)}×; api key ≥ 0.90× → ${ratio("api key").toFixed(2)}×; jwt ≥ 0.90× → ${ratio("jwt").toFixed(2)}×; rate limit ≥ 0.90× → ${ratio("rate limit").toFixed(2)}×${limiterLive ? "" : " (limiter not active)"}; ≤ 1 redis command per request → ${per(scripts)}`,
    );
  } finally {
    await gw.stop();
    await authService.stop(true);
  }
  return out.join("\n");
}

function addDiff(
  acc: Map<string, number>,
  before: Map<string, number>,
  after: Map<string, number>,
): Map<string, number> {
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) acc.set(k, (acc.get(k) ?? 0) + d);
  }
  return acc;
}
