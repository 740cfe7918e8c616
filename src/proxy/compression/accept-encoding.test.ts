import { expect, test } from "bun:test";
import type { ContentCoding } from "../../model/index.ts";
import { chooseCoding } from "./accept-encoding.ts";

const ALL: readonly ContentCoding[] = ["gzip", "br", "zstd"];

test.each([
  // [Accept-Encoding, offered, chosen]
  [null, ALL, undefined],
  ["", ALL, undefined],
  ["gzip", ALL, "gzip"],
  ["GZIP", ALL, "gzip"],
  ["x-gzip", ALL, "gzip"],
  ["br", ALL, "br"],
  ["deflate", ALL, undefined],
  ["identity", ALL, undefined],
  // A tie goes to the gateway's order; the heaviest q wins otherwise.
  ["zstd, br, gzip", ALL, "gzip"],
  ["zstd, br, gzip", ["br", "gzip"], "br"],
  ["gzip;q=0.5, br;q=0.9", ALL, "br"],
  ["gzip;q=0.5, br;q=0.500", ALL, "gzip"],
  ["gzip; q=1.0 , br;q=0.999", ALL, "gzip"],
  // q=0 refuses a coding; * weighs every coding not listed.
  ["gzip;q=0", ALL, undefined],
  ["*", ALL, "gzip"],
  ["*;q=0.2, gzip;q=0", ALL, "br"],
  ["*;q=0", ALL, undefined],
  ["br;q=0.1, *;q=0.5", ALL, "gzip"],
  // identity heavier than the best coding keeps the body as it is; equal or absent does not.
  ["gzip;q=0.5, identity", ALL, undefined],
  ["gzip, identity", ALL, "gzip"],
  ["gzip, identity;q=0", ALL, "gzip"],
  ["identity;q=0", ALL, undefined],
  // Unreadable weights make the element ignored; other parameters are ignored.
  ["gzip;q=2", ALL, undefined],
  ["gzip;q=0.1234, br", ALL, "br"],
  ["gzip;q=abc, br;q=0.1", ALL, "br"],
  ["gzip;level=9", ALL, "gzip"],
  [" , ,gzip ,", ALL, "gzip"],
  ["gzip;q=0.", ALL, undefined],
  ["gzip;q=1.", ALL, "gzip"],
] as const)("Accept-Encoding %p of %p: %p", (ae, offered, chosen) => {
  expect(chooseCoding(ae, offered as readonly ContentCoding[])).toBe(chosen as ContentCoding | undefined);
});

test("a long hostile value is read in one pass", () => {
  const value = `${"a;q=0.5,".repeat(20_000)}br`;
  const t0 = performance.now();
  expect(chooseCoding(value, ALL)).toBe("br");
  expect(performance.now() - t0).toBeLessThan(200);
});
