import { describe, expect, test } from "bun:test";
import { LeaseBook, leaseKey, leaseLifetimeMs } from "./leases.ts";

const full = [{ remaining: 500, resetMs: 4_000, retryAfterMs: 0 }];

describe("LeaseBook", () => {
  test("no lease: the store decides; one ask at a time per key", () => {
    const book = new LeaseBook();
    expect(book.take("k", 0)).toBeUndefined();
    expect(book.shouldAsk("k")).toBe(true);
    expect(book.shouldAsk("k")).toBe(false);
    book.failed("k");
    expect(book.shouldAsk("k")).toBe(true);
  });

  test("a granted lease admits its tokens from memory, then asks again while a quarter is left", () => {
    const book = new LeaseBook();
    book.shouldAsk("k");
    book.granted("k", 100, full, 0);
    let served = 0;
    while (book.take("k", 1) !== undefined) served++;
    // 100 tokens, low water 25: the 75th take leaves 25 and the next one goes to the store to ask for more.
    expect(served).toBe(75);
    expect(book.shouldAsk("k")).toBe(true);
    // While that ask is out, the rest of the lease is used, and then the store decides again.
    while (book.take("k", 2) !== undefined) served++;
    expect(served).toBe(100);
    book.granted("k", 100, full, 3);
    expect(book.take("k", 4)).toBeDefined();
  });

  test("what the client is told counts the tokens this replica still holds", () => {
    const book = new LeaseBook();
    book.shouldAsk("k");
    book.granted("k", 40, full, 0);
    const first = book.take("k", 1_000 / 4);
    expect(first?.allowed).toBe(true);
    expect(first?.items[0]?.remaining).toBe(500 + 39);
    expect(first?.items[0]?.resetMs).toBe(4_000 - 250);
  });

  test("a lease ends after its lifetime, and is renewed before that", () => {
    const book = new LeaseBook();
    book.shouldAsk("k");
    book.granted("k", 200, full, 0);
    expect(book.take("k", leaseLifetimeMs * 0.5)).toBeDefined();
    // Past three quarters of its life the next request asks for a new lease.
    expect(book.take("k", leaseLifetimeMs * 0.8)).toBeUndefined();
    book.shouldAsk("k");
    expect(book.take("k", leaseLifetimeMs * 0.8)).toBeDefined();
    expect(book.take("k", leaseLifetimeMs)).toBeUndefined();
    expect(book.size).toBe(0);
  });

  test("a grant of nothing leaves no lease", () => {
    const book = new LeaseBook();
    book.shouldAsk("k");
    book.granted("k", 0, full, 0);
    expect(book.take("k", 1)).toBeUndefined();
  });

  test("the key of a request's buckets", () => {
    expect(leaseKey([{ key: "a", intervalMs: 1, burst: 1 }])).toBe("a");
    expect(
      leaseKey([
        { key: "a", intervalMs: 1, burst: 1 },
        { key: "b", intervalMs: 1, burst: 1 },
      ]),
    ).toBe("a\nb\n");
  });
});
