import { describe, expect, test } from "bun:test";
import type { Balancing } from "../../model/index.ts";
import { weightedPicker } from "../request/balancer.ts";
import type { BackendChoice, CompiledBackend } from "../table.ts";
import { balanceInput } from "./request-input.ts";
import { RouteBalancer } from "./route-balancer.ts";
import { endpointToken } from "./session-token.ts";

function backend(id: string, hosts: string[]): CompiledBackend {
  return { id, bases: hosts.map((h) => `http://${h}:80`), problem: undefined, h2c: false, next: 0 };
}

function choiceOf(b: CompiledBackend): BackendChoice {
  return {
    backend: b,
    backendId: b.id,
    filters: { request: [], response: [], kinds: [], mirrors: false } as never,
    failStatus: undefined,
  };
}

function balancer(balancing: Balancing, backends: CompiledBackend[], weights = backends.map(() => 1)) {
  const choices = backends.map(choiceOf);
  const pick = weightedPicker(choices.map((value, i) => ({ value, weight: weights[i] as number })));
  return new RouteBalancer(balancing, choices, pick, weights);
}

const cookieSession: Balancing = { algorithm: "RoundRobin", session: { type: "Cookie", name: "route" } };
const req = (cookie?: string) =>
  balanceInput(new Headers(cookie ? { cookie } : {}), "/", "", "10.0.0.1", false);

describe("session persistence", () => {
  const web = backend("ns/web:80", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]);

  test("a client without a cookie gets one naming the endpoint it was sent to; with it, it stays there", () => {
    const rb = balancer(cookieSession, [web]);
    const first = rb.lease(req());
    const base = first?.next();
    expect(first?.responseField).toEqual([
      "set-cookie",
      `route=${endpointToken(base as string)}; Path=/; HttpOnly`,
    ]);
    for (let i = 0; i < 10; i++) {
      const again = rb.lease(req(`route=${endpointToken(base as string)}`));
      expect(again?.next()).toBe(base);
      expect(again?.responseField).toBeUndefined();
    }
  });

  test("a forged or stale token (no endpoint of this route) is treated as absent: balanced and reissued", () => {
    const other = backend("ns/admin:80", ["10.9.0.1"]);
    const rb = balancer(cookieSession, [web]);
    for (const forged of [endpointToken("http://10.9.0.1:80"), "zzzz", ""]) {
      const lease = rb.lease(req(`route=${forged}`));
      const base = lease?.next() as string;
      expect(web.bases).toContain(base);
      expect(other.bases).not.toContain(base);
      expect(lease?.responseField?.[1]).toStartWith(`route=${endpointToken(base)};`);
    }
  });

  test("an endpoint that left: the client is moved and given a new cookie", () => {
    const gone = endpointToken("http://10.0.0.3:80");
    const smaller = backend("ns/web:80", ["10.0.0.1", "10.0.0.2"]);
    const lease = balancer(cookieSession, [smaller]).lease(req(`route=${gone}`));
    const base = lease?.next() as string;
    expect(smaller.bases).toContain(base);
    expect(lease?.responseField?.[1]).toContain(endpointToken(base));
  });

  test("the token picks the backend too, among the route's weighted backends (never a weight-0 one)", () => {
    const canary = backend("ns/canary:80", ["10.0.1.1"]);
    const rb = balancer(cookieSession, [web, canary]);
    const token = endpointToken("http://10.0.1.1:80");
    for (let i = 0; i < 5; i++)
      expect(rb.lease(req(`route=${token}`))?.choice.backendId).toBe("ns/canary:80");
    const off = balancer(cookieSession, [web, canary], [1, 0]);
    expect(off.lease(req(`route=${token}`))?.choice.backendId).toBe("ns/web:80");
  });

  test("retries stay on the pinned endpoint unless changeOnFailure, which moves and reissues", () => {
    const token = endpointToken("http://10.0.0.2:80");
    const stay = balancer(cookieSession, [web]).lease(req(`route=${token}`));
    expect([stay?.next(), stay?.next()]).toEqual(["http://10.0.0.2:80", "http://10.0.0.2:80"]);
    const moving: Balancing = {
      ...cookieSession,
      session: { type: "Cookie", name: "route", changeOnFailure: true },
    };
    const move = balancer(moving, [web]).lease(req(`route=${token}`));
    expect(move?.next()).toBe("http://10.0.0.2:80");
    move?.end(true);
    const second = move?.next() as string;
    expect(second).not.toBe("http://10.0.0.2:80");
    expect(move?.responseField?.[1]).toContain(endpointToken(second));
  });

  test("Header sessions read and hand out the header", () => {
    const rb = balancer({ algorithm: "RoundRobin", session: { type: "Header", name: "X-Session" } }, [web]);
    const lease = rb.lease(balanceInput(new Headers(), "/", "", "1.2.3.4", false));
    const base = lease?.next() as string;
    expect(lease?.responseField).toEqual(["x-session", endpointToken(base)]);
    const back = rb.lease(
      balanceInput(new Headers({ "x-session": endpointToken(base) }), "/", "", "1.2.3.4", false),
    );
    expect(back?.next()).toBe(base);
  });
});

describe("hash key balancing", () => {
  test("the same header value, the same endpoint, across leases", () => {
    const b = backend("ns/web:80", ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]);
    const rb = balancer({ algorithm: "ConsistentHash", hashKey: [{ kind: "Header", name: "x-user" }] }, [b]);
    const at = (user: string) =>
      rb.lease(balanceInput(new Headers({ "x-user": user }), "/", "", "1.2.3.4", false))?.next();
    for (let i = 0; i < 20; i++) expect(at(`u${i}`)).toBe(at(`u${i}`) as string);
  });
});

describe("timed sessions (idleTimeout, absoluteTimeout)", () => {
  const web = backend("ns/web:80", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
  const timed = (idleMs: number, absoluteMs?: number): Balancing => ({
    algorithm: "RoundRobin",
    session: {
      type: "Cookie",
      name: "route",
      idleTimeoutMs: idleMs,
      ...(absoluteMs !== undefined ? { absoluteTimeoutMs: absoluteMs } : {}),
    },
  });
  const tokenOf = (field: readonly [string, string] | undefined) =>
    (field?.[1] ?? "").split(";")[0]?.slice("route=".length) as string;

  test("a signed token pins; the plain endpoint hash alone does not (it is balanced and reissued)", () => {
    const rb = balancer(timed(60_000), [web]);
    const first = rb.lease(req());
    const base = first?.next() as string;
    const token = tokenOf(first?.responseField);
    expect(token).toStartWith(`${endpointToken(base)}.`);
    for (let i = 0; i < 6; i++) {
      const again = rb.lease(req(`route=${token}`));
      expect(again?.next()).toBe(base);
      // Fresh stamp: no Set-Cookie on every response.
      expect(again?.responseField).toBeUndefined();
    }
    let moved = 0;
    for (let i = 0; i < 6; i++) {
      const bare = rb.lease(req(`route=${endpointToken(base)}`));
      if (bare?.next() !== base) moved++;
      expect(tokenOf(bare?.responseField)).toContain(".");
    }
    expect(moved).toBeGreaterThan(0);
  });

  test("idle: reissued once a share of the timeout old; expired: balanced anew with a new start", async () => {
    const rb = balancer(timed(200), [web]);
    const first = rb.lease(req());
    const base = first?.next() as string;
    const token = tokenOf(first?.responseField);
    await Bun.sleep(80);
    const refreshed = rb.lease(req(`route=${token}`));
    expect(refreshed?.next()).toBe(base);
    const next = tokenOf(refreshed?.responseField);
    expect(next).toStartWith(`${endpointToken(base)}.${token.split(".")[1]}.`);
    expect(next).not.toBe(token);
    await Bun.sleep(220);
    const expired = rb.lease(req(`route=${token}`));
    expired?.next();
    const fresh = tokenOf(expired?.responseField);
    expect(fresh).not.toBe("");
    expect(fresh.split(".")[1]).not.toBe(token.split(".")[1]);
  });
});
