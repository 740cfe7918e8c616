import { expect, test } from "bun:test";
import { CircuitBreaker, ClientConcurrencyZone } from "./breaker.ts";
import { admit, HOLDS_CLIENT, HOLDS_REQUEST, HOLDS_RETRY, REFUSED, release } from "./hold.ts";
import { breakerRejections, circuitBreakerFor, clientZoneFor, keepCircuitBreakers } from "./registry.ts";

const INF = Number.POSITIVE_INFINITY;
const caps = (maxParallelRequests: number, maxParallelRetries = INF) => ({
  maxParallelRequests,
  maxParallelRetries,
  maxConnections: INF,
  maxEndpointConnections: INF,
  maxRequestsPerConnection: INF,
});

test("a breaker admits up to its cap, refuses one more and counts it, and admits again after an end", () => {
  const b = new CircuitBreaker("shop/web:80", caps(2));
  expect([b.tryRequest(), b.tryRequest(), b.tryRequest()]).toEqual([true, true, false]);
  expect(b.requests).toBe(2);
  expect(b.rejected.parallel_requests).toBe(1);
  b.endRequest();
  expect(b.tryRequest()).toBe(true);
  // An end with nothing in flight never takes the count below 0 (which would open the cap by one).
  for (let i = 0; i < 5; i++) b.endRequest();
  expect(b.requests).toBe(0);
});

test("retries have their own cap; 0 refuses every one", () => {
  const b = new CircuitBreaker("shop/web:80", caps(Number.POSITIVE_INFINITY, 0));
  expect(b.tryRetry()).toBe(false);
  expect(b.rejected.parallel_retries).toBe(1);
  b.caps = caps(Number.POSITIVE_INFINITY, 1);
  expect([b.tryRetry(), b.tryRetry()]).toEqual([true, false]);
  b.endRetry();
  expect(b.retries).toBe(0);
});

test("a client zone counts each address apart", () => {
  const z = new ClientConcurrencyZone("ingress/shop/web", 1);
  expect(z.tryEnter("127.0.0.2")).toBe(true);
  expect(z.tryEnter("127.0.0.2")).toBe(false);
  expect(z.tryEnter("127.0.0.3")).toBe(true);
  z.leave("127.0.0.2");
  z.leave("127.0.0.3");
  expect(z.clients).toBe(0);
  expect(z.rejected).toBe(1);
});

test("limit-allowlist: an exempt client is neither counted nor refused; the list follows a recompile", () => {
  const z = clientZoneFor({ zone: "ingress/test-allow/web", limit: 1, exemptCIDRs: ["10.1.0.0/16"] });
  const held = [admit(undefined, z, "10.1.2.3"), admit(undefined, z, "10.1.2.3")];
  expect(held).toEqual([0, 0]);
  expect(z.inFlight("10.1.2.3")).toBe(0);
  expect(admit(undefined, z, "10.2.0.1")).toBe(HOLDS_CLIENT);
  expect(admit(undefined, z, "10.2.0.1")).toBe(REFUSED);
  clientZoneFor({ zone: "ingress/test-allow/web", limit: 1 });
  expect(admit(undefined, z, "10.1.2.3")).toBe(HOLDS_CLIENT);
  expect(admit(undefined, z, "10.1.2.3")).toBe(REFUSED);
});

test("admit is all or nothing: a request the breaker refuses gives its client slot back", () => {
  const b = new CircuitBreaker("shop/web:80", caps(0));
  const z = new ClientConcurrencyZone("ingress/shop/web", 5);
  expect(admit(b, z, "10.0.0.1")).toBe(REFUSED);
  expect(z.inFlight("10.0.0.1")).toBe(0);
  b.caps = caps(1);
  const holds = admit(b, z, "10.0.0.1");
  expect(holds).toBe(HOLDS_REQUEST | HOLDS_CLIENT);
  expect(b.tryRetry()).toBe(true);
  expect(release(holds | HOLDS_RETRY, b, z, "10.0.0.1")).toBe(0);
  expect([b.requests, b.retries, z.inFlight("10.0.0.1")]).toEqual([0, 0, 0]);
});

test("the registry keeps a backend's breaker (and what is in flight) across compiles; refusals outlive it", () => {
  const cfg = { source: { kind: "BackendTrafficPolicy", namespace: "shop", name: "cb" } };
  const a = circuitBreakerFor("test-registry/web:80", { ...cfg, maxParallelRequests: 1 });
  expect(a.tryRequest()).toBe(true);
  const again = circuitBreakerFor("test-registry/web:80", { ...cfg, maxParallelRequests: 2 });
  expect(again).toBe(a);
  expect(again.requests).toBe(1);
  expect(again.tryRequest()).toBe(true);
  expect(again.tryRequest()).toBe(false);
  const zone = clientZoneFor({ zone: "ingress/test-registry/web", limit: 3 });
  expect(clientZoneFor({ zone: "ingress/test-registry/web", limit: 4 })).toBe(zone);
  expect(zone.limit).toBe(4);
  keepCircuitBreakers(new Set(), new Set());
  const left = breakerRejections().find(
    (r) => r.backend === "test-registry/web:80" && r.limit === "parallel_requests",
  );
  expect(left?.n).toBe(1);
  expect(circuitBreakerFor("test-registry/web:80", { ...cfg, maxParallelRequests: 1 })).not.toBe(a);
  keepCircuitBreakers(new Set(), new Set());
});

test("connection caps: per backend and per endpoint, each refusal counted under its own label", () => {
  const b = new CircuitBreaker("shop/conns:80", {
    ...caps(INF),
    maxConnections: 3,
    maxEndpointConnections: 2,
  });
  expect(b.capsConnections).toBe(true);
  expect(new CircuitBreaker("shop/none:80", caps(5)).capsConnections).toBe(false);
  expect([b.tryConnect("http://a:1"), b.tryConnect("http://a:1"), b.tryConnect("http://a:1")]).toEqual([
    true,
    true,
    false,
  ]);
  expect(b.rejected.endpoint_connections).toBe(1);
  expect(b.tryConnect("http://b:1")).toBe(true);
  expect(b.roomFor("http://c:1")).toBe("connections");
  expect(b.tryConnect("http://c:1")).toBe(false);
  expect(b.rejected.connections).toBe(1);
  b.endConnection("http://a:1");
  expect([b.connections, b.endpointConnections.get("http://a:1")]).toEqual([2, 1]);
  expect(b.tryConnect("http://c:1")).toBe(true);
  // Ends past what was counted never open the caps.
  for (let i = 0; i < 5; i++) b.endConnection("http://c:1");
  expect(b.connections).toBe(0);
  expect(b.endpointConnections.has("http://c:1")).toBe(false);
});
