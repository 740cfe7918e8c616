import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TCPSocketListener } from "bun";
import { CircuitBreaker } from "../../circuit-breaker/breaker.ts";
import { type UpstreamConn, type UpstreamHandler, UpstreamPool } from "./pool.ts";

const INF = Number.POSITIVE_INFINITY;
const caps = (maxConnections: number, maxEndpointConnections = INF, maxRequestsPerConnection = INF) => ({
  maxParallelRequests: INF,
  maxParallelRetries: INF,
  maxConnections,
  maxEndpointConnections,
  maxRequestsPerConnection,
});

/** Two upstreams that count the connections open to them. */
const open = [0, 0];
const accepted = [0, 0];
const servers: TCPSocketListener<undefined>[] = [];
const endpoints: string[] = [];
const pool = new UpstreamPool();

beforeAll(() => {
  for (const i of [0, 1]) {
    const s = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open() {
          open[i] = (open[i] ?? 0) + 1;
          accepted[i] = (accepted[i] ?? 0) + 1;
        },
        close() {
          open[i] = (open[i] ?? 0) - 1;
        },
        data() {},
      },
    });
    servers.push(s);
    endpoints.push(`http://127.0.0.1:${s.port}`);
  }
});

afterAll(() => {
  pool.closeIdle();
  for (const s of servers) s.stop(true);
});

/** A handler whose `opened` settles when the connection is ready. */
function handler(): UpstreamHandler & { opened: Promise<void> } {
  const p = Promise.withResolvers<void>();
  return { onOpen: () => p.resolve(), onData() {}, onDrain() {}, onClose() {}, opened: p.promise };
}

async function take(b: CircuitBreaker, endpoint: string): Promise<UpstreamConn | undefined> {
  const h = handler();
  const c = pool.acquire(endpoint, h, false, undefined, undefined, undefined, b);
  if (c !== undefined) await h.opened;
  return c;
}

const settle = async (cond: () => boolean) => {
  for (let i = 0; i < 100 && !cond(); i++) await Bun.sleep(10);
};

test("maxConnections: a new connection past the cap is refused, an idle one of the backend makes room", async () => {
  const [a, b] = endpoints as [string, string];
  const cb = new CircuitBreaker("caps/backend:80", caps(2));
  const c1 = await take(cb, a);
  const c2 = await take(cb, a);
  expect(await take(cb, a)).toBeUndefined();
  expect([cb.connections, cb.rejected.connections]).toEqual([2, 1]);
  await settle(() => open[0] === 2);
  expect(open[0]).toBe(2);
  // c1 idle: a request for the other endpoint closes it rather than be refused.
  pool.release(c1 as UpstreamConn);
  const c3 = await take(cb, b);
  expect(c3).toBeDefined();
  expect(cb.connections).toBe(2);
  await settle(() => open[0] === 1);
  expect([open[0], open[1]]).toEqual([1, 1]);
  for (const c of [c2, c3]) (c as UpstreamConn).destroy();
  expect(cb.connections).toBe(0);
  await settle(() => open[0] === 0 && open[1] === 0);
});

test("perEndpoint.maxConnections: the endpoint's own cap; its idle connection is reused, not counted again", async () => {
  const [a, b] = endpoints as [string, string];
  const cb = new CircuitBreaker("caps/per-endpoint:80", caps(INF, 1));
  const c1 = (await take(cb, a)) as UpstreamConn;
  expect(await take(cb, a)).toBeUndefined();
  expect(cb.rejected.endpoint_connections).toBe(1);
  const other = (await take(cb, b)) as UpstreamConn;
  expect(other).toBeDefined();
  pool.release(c1);
  const again = await take(cb, a);
  expect(again).toBe(c1);
  expect(cb.endpointConnections.get(a)).toBe(1);
  pool.closeIdle();
  c1.destroy();
  expect(cb.endpointConnections.get(a)).toBeUndefined();
  other.destroy();
  expect(cb.connections).toBe(0);
});

test("maxRequestsPerConnection: a connection is closed, not pooled, after its Nth request", async () => {
  const [a] = endpoints as [string];
  const before = accepted[0] ?? 0;
  const cb = new CircuitBreaker("caps/reuse:80", caps(INF, INF, 2));
  const c1 = (await take(cb, a)) as UpstreamConn;
  pool.release(c1);
  const c2 = (await take(cb, a)) as UpstreamConn;
  expect(c2).toBe(c1);
  pool.release(c2);
  expect(c1.closed).toBe(true);
  expect(cb.connections).toBe(0);
  const c3 = (await take(cb, a)) as UpstreamConn;
  expect(c3).not.toBe(c1);
  expect((accepted[0] ?? 0) - before).toBe(2);
  c3.destroy();
});

test("a connection the upstream closes gives its place back", async () => {
  const [b] = endpoints.slice(1) as [string];
  const cb = new CircuitBreaker("caps/closed:80", caps(1));
  const c1 = (await take(cb, b)) as UpstreamConn;
  pool.release(c1);
  expect(cb.connections).toBe(1);
  servers[1]?.stop(true);
  await settle(() => cb.connections === 0);
  expect(cb.connections).toBe(0);
});
