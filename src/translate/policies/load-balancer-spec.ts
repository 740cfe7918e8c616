/**
 * A BackendTrafficPolicy's `loadBalancer`, with Envoy Gateway's field names (its LoadBalancer type),
 * onto the model's `Backend.loadBalancer`: the algorithm the pickers of src/proxy/balancing/ use for
 * this Service port on every route whose own balancing sets none (an ingress-nginx `load-balance: ewma`
 * or `upstream-hash-by` is the route's, and wins there: a warning names each such route). Refused by
 * name, never taken and ignored: `slowStart` (no warm-up window), `zoneAware`, `endpointOverride`,
 * `consistentHash.tableSize` (the ring is fixed: 160 points per endpoint), a cookie's `ttl` and
 * `attributes` (Envoy then issues the cookie itself: that is HTTPRoute `sessionPersistence` here), and
 * hash types other than SourceIP, Header and Cookie.
 */
import type {
  BackendLoadBalancer,
  GatewayModel,
  HashKeyPart,
  Problem,
  SourceRef,
} from "../../model/index.ts";
import { problem } from "../common/problems.ts";

/** What a policy's `loadBalancer` sets (its source is added where it is applied). */
export type PolicyLoadBalancer = Omit<BackendLoadBalancer, "source">;

const TYPES = ["RoundRobin", "Random", "LeastRequest", "ConsistentHash"] as const;
const refused: Readonly<Record<string, string>> = {
  slowStart: "slow start (a warm-up window for new endpoints) is not implemented",
  zoneAware: "zone-aware balancing is not implemented",
  endpointOverride: "endpoint override is not implemented",
};
/** An HTTP field name (RFC 9110 token), bounded. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

/** `spec.loadBalancer` read, or why it cannot be applied (one message naming the field). */
export function parseLoadBalancerSpec(value: unknown): PolicyLoadBalancer | string {
  const at = (f: string) => `spec.loadBalancer.${f}`;
  const lb = asObject(value);
  if (lb === undefined) return "spec.loadBalancer: must be an object";
  for (const key of Object.keys(lb)) {
    if (key === "type" || key === "consistentHash") continue;
    const why = refused[key];
    return why !== undefined ? `${at(key)}: ${why}` : `${at(key)}: unknown field`;
  }
  const type = lb.type;
  if (!(TYPES as readonly unknown[]).includes(type))
    return `${at("type")}: must be one of ${TYPES.join(", ")}, got ${JSON.stringify(type)}`;
  const algorithm = type as PolicyLoadBalancer["algorithm"];
  if (algorithm !== "ConsistentHash") {
    if (lb.consistentHash !== undefined) return `${at("consistentHash")}: is only for type ConsistentHash`;
    return { algorithm };
  }
  const key = parseConsistentHash(lb.consistentHash);
  return typeof key === "string" ? key : { algorithm, hashKey: key };
}

function parseConsistentHash(value: unknown): HashKeyPart[] | string {
  const at = (f: string) => `spec.loadBalancer.consistentHash${f === "" ? "" : `.${f}`}`;
  const ch = asObject(value);
  if (ch === undefined) return `${at("")}: must be an object when type is ConsistentHash`;
  for (const key of Object.keys(ch)) {
    if (key === "type" || key === "header" || key === "cookie") continue;
    if (key === "tableSize")
      return `${at(key)}: is not configurable (the hash ring has 160 points per endpoint, ketama)`;
    return `${at(key)}: unknown field`;
  }
  const type = ch.type;
  const other = (f: string) => (type !== f && ch[f.toLowerCase()] !== undefined ? f : undefined);
  const stray = other("Header") ?? other("Cookie");
  if (stray !== undefined) return `${at(stray.toLowerCase())}: is only for type ${stray}`;
  if (type === "SourceIP") return [{ kind: "ClientIP" }];
  if (type === "Header") {
    const h = asObject(ch.header);
    if (h === undefined) return `${at("header")}: must be set when type is Header`;
    for (const key of Object.keys(h)) if (key !== "name") return `${at(`header.${key}`)}: unknown field`;
    if (typeof h.name !== "string" || !TOKEN.test(h.name))
      return `${at("header.name")}: must be a header name, got ${JSON.stringify(h.name)}`;
    return [{ kind: "Header", name: h.name.toLowerCase() }];
  }
  if (type === "Cookie") {
    const c = asObject(ch.cookie);
    if (c === undefined) return `${at("cookie")}: must be set when type is Cookie`;
    for (const key of Object.keys(c)) {
      if (key === "name") continue;
      if (key === "ttl" || key === "attributes")
        return `${at(`cookie.${key}`)}: a cookie issued by the gateway is not done here (HTTPRoute sessionPersistence does that); hashing on a cookie the client has is`;
      return `${at(`cookie.${key}`)}: unknown field`;
    }
    if (typeof c.name !== "string" || !TOKEN.test(c.name))
      return `${at("cookie.name")}: must be a cookie name, got ${JSON.stringify(c.name)}`;
    return [{ kind: "Cookie", name: c.name }];
  }
  if (type === "Headers" || type === "QueryParams")
    return `${at("type")}: ${type} is not implemented (SourceIP, Header and Cookie are)`;
  return `${at("type")}: must be SourceIP, Header or Cookie, got ${JSON.stringify(type)}`;
}

function asObject(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

/**
 * A warning for every route that sends to a backend with a policy's `loadBalancer` but balances by its
 * own algorithm (an annotation's EWMA or hash, a route-level choice): the route's wins there.
 */
export function routeAlgorithmWarnings(model: GatewayModel): Problem[] {
  const out: Problem[] = [];
  const seen = new Set<string>();
  for (const l of model.listeners)
    for (const vh of l.virtualHosts)
      for (const r of vh.routes) {
        const a = r.action;
        if (a.kind !== "Forward" || a.balancing === undefined || a.balancing.algorithm === "RoundRobin")
          continue;
        for (const wb of a.backends) {
          const lb = model.backends[wb.backendId]?.loadBalancer;
          const key = `${r.name}\n${wb.backendId}`;
          if (lb === undefined || seen.has(key)) continue;
          seen.add(key);
          out.push(overridden(lb.source, r.name, wb.backendId, a.balancing.algorithm));
        }
      }
  return out;
}

function overridden(source: SourceRef, route: string, backend: string, algorithm: string): Problem {
  const why = `loadBalancer does not apply on route ${route} (backend ${backend}): the route balances by its own ${algorithm}`;
  return problem(source, "Overridden", why, "warning");
}
