import { expect, test } from "bun:test";
import { isMisdirected, owningListener } from "./misdirected.ts";

// The four HTTPS listeners of the conformance Gateway `same-namespace-with-https-listener`.
const listeners = [undefined, "second-example.org", "*.wildcard.org", "fourth-example.wildcard.org"];

test("a name belongs to the most specific listener hostname that covers it", () => {
  expect(owningListener(listeners, "example.org")).toBe(0);
  expect(owningListener(listeners, "second-example.org")).toBe(1);
  expect(owningListener(listeners, "third-example.wildcard.org")).toBe(2);
  expect(owningListener(listeners, "a.b.wildcard.org")).toBe(2); // listener wildcards span labels
  expect(owningListener(listeners, "fourth-example.wildcard.org")).toBe(3);
  expect(owningListener(listeners, "wildcard.org")).toBe(0);
  expect(owningListener(["a.example"], "b.example")).toBe(-1);
});

test("421 when SNI and Host belong to different listeners (upstream conformance cases)", () => {
  const cases: [string, string, boolean][] = [
    ["example.org", "example.org", false],
    ["example.org", "second-example.org", true],
    ["example.org", "unknown-example.org", false], // same catch-all listener: routed (404)
    ["second-example.org", "example.org", true],
    ["second-example.org", "unknown-example.org", true],
    ["third-example.wildcard.org", "fith-example.wildcard.org", false],
    ["third-example.wildcard.org", "fourth-example.wildcard.org", true],
    ["fourth-example.wildcard.org", "fith-example.wildcard.org", true],
    ["unknown-example.org", "example.org", false],
    ["Example.ORG", "example.org", false],
  ];
  for (const [sni, host, expected] of cases)
    expect([sni, host, isMisdirected(listeners, sni, host)]).toEqual([sni, host, expected]);
});

test("no SNI (a client that dialled an address) is never misdirected", () => {
  expect(isMisdirected(listeners, undefined, "second-example.org")).toBe(false);
  expect(isMisdirected(listeners, "", "second-example.org")).toBe(false);
});

test("an SNI name with a trailing dot is the name without it, as the SNI table reads it", () => {
  expect(isMisdirected(listeners, "second-example.org.", "second-example.org")).toBe(false);
  expect(isMisdirected(listeners, "Fourth-Example.wildcard.org.", "fourth-example.wildcard.org")).toBe(false);
  expect(isMisdirected(listeners, "second-example.org.", "example.org")).toBe(true);
});
