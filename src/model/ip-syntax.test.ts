/** ip-syntax.ts answers as node:net does, on addresses, near-addresses and generated strings. */
import { expect, test } from "bun:test";
import * as net from "node:net";
import { isIP, isIPv4, isIPv6 } from "./ip-syntax.ts";

const answers = (s: string): unknown[] => [s, isIP(s), isIPv4(s), isIPv6(s)];
const nodeAnswers = (s: string): unknown[] => [s, net.isIP(s), net.isIPv4(s), net.isIPv6(s)];

test.each([
  "",
  "1.2.3.4",
  "255.255.255.255",
  "256.1.1.1",
  "01.1.1.1",
  "1.2.3",
  " 1.2.3.4",
  "::",
  "::1",
  "fe80::1%eth0",
  "fe80::1%",
  "::ffff:1.2.3.4",
  "1:2:3:4:5:6:7:8",
  "1:2:3:4:5:6:7:8:9",
  "1::2::3",
  "[::1]",
  "a:b:c:d:e:f:1.2.3.4",
  "12345::",
  "localhost",
])("%p", (s) => {
  expect(answers(s)).toEqual(nodeAnswers(s));
});

test("generated strings", () => {
  let seed = 3;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const parts = [
    "0",
    "1",
    "01",
    "255",
    "256",
    "a",
    "ff",
    "FFFF",
    "fffff",
    "::",
    ":",
    ".",
    "%eth0",
    "1.2.3.4",
    " ",
  ];
  let addresses = 0;
  for (let i = 0; i < 20000; i++) {
    const n = 1 + Math.floor(random() * 8);
    const s = Array.from({ length: n }, () => parts[Math.floor(random() * parts.length)]).join(
      random() < 0.5 ? ":" : "",
    );
    if (net.isIP(s) !== 0) addresses++;
    expect(answers(s)).toEqual(nodeAnswers(s));
  }
  expect(addresses).toBeGreaterThan(100);
});
