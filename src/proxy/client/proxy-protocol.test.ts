import { describe, expect, test } from "bun:test";
import { ProxyPreamble, readsProxyHeader } from "./proxy-preamble.ts";
import { MAX_V1_BYTES, MAX_V2_BYTES, parseProxyHeader } from "./proxy-protocol.ts";
import { forwardedFor, TrustedProxies } from "./trusted-proxies.ts";

const SIG = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];

/** A v2 header: version/command byte, family/transport byte, the body after the 16 bytes. */
function v2(verCmd: number, famProto: number, body: number[], declared = body.length): Uint8Array {
  return Uint8Array.from([...SIG, verCmd, famProto, declared >> 8, declared & 0xff, ...body]);
}

const ipv4Body = [203, 0, 113, 7, 10, 0, 0, 1, 0x30, 0x39, 0x01, 0xbb];
const ipv6Body = [
  ...[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x05],
  ...[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01],
  ...[0x30, 0x39, 0x01, 0xbb],
];

describe("parseProxyHeader v1", () => {
  const text = (s: string) => Buffer.from(s, "latin1");

  test("TCP4 and TCP6 name the source; UNKNOWN keeps the socket's peer; the length covers the CRLF", () => {
    const line = "PROXY TCP4 203.0.113.7 10.0.0.1 56324 443\r\n";
    expect(parseProxyHeader(text(`${line}GET / HTTP/1.1\r\n`))).toEqual({
      kind: "header",
      length: line.length,
      source: "203.0.113.7",
    });
    expect(parseProxyHeader(text("PROXY TCP6 2001:db8::5 fd00::1 1 65535\r\n"))).toMatchObject({
      source: "2001:db8::5",
    });
    expect(parseProxyHeader(text("PROXY UNKNOWN\r\n"))).toEqual({
      kind: "header",
      length: 15,
      source: undefined,
    });
    expect(parseProxyHeader(text("PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n"))).toMatchObject({
      source: undefined,
    });
  });

  test("a truncated line is incomplete until it cannot be a header any more", () => {
    for (const part of [
      "P",
      "PROX",
      "PROXY ",
      "PROXY TCP4 203.0.113.7 10.0.0.1 5",
      "PROXY TCP4 1.2.3.4 1.2.3.4 1 2\r",
    ])
      expect(parseProxyHeader(text(part)).kind).toBe("incomplete");
    expect(parseProxyHeader(text(`PROXY ${"x".repeat(MAX_V1_BYTES)}`)).kind).toBe("invalid");
  });

  test("hostile lines are invalid: oversized, bad family, bad addresses, bad ports, bare LF, spaces", () => {
    const bad = [
      `PROXY TCP4 1.2.3.4 5.6.7.8 1 2${" ".repeat(100)}\r\n`,
      "PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n",
      "PROXY TCP4 2001:db8::1 5.6.7.8 1 2\r\n",
      "PROXY TCP6 1.2.3.4 fd00::1 1 2\r\n",
      "PROXY TCP4 1.2.3.256 5.6.7.8 1 2\r\n",
      "PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n",
      "PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n",
      "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n",
      "PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n",
      "PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n",
      "PROXY TCP4 1.2.3.4\t5.6.7.8 1 2\r\n",
      "GET / HTTP/1.1\r\n",
      "proxy TCP4 1.2.3.4 5.6.7.8 1 2\r\n",
    ];
    for (const b of bad) expect([b, parseProxyHeader(text(b)).kind]).toEqual([b, "invalid"]);
  });
});

describe("parseProxyHeader v2", () => {
  test("PROXY over IPv4 and IPv6 names the source; TLVs are skipped", () => {
    expect(parseProxyHeader(v2(0x21, 0x11, ipv4Body))).toEqual({
      kind: "header",
      length: 28,
      source: "203.0.113.7",
    });
    expect(parseProxyHeader(v2(0x21, 0x21, ipv6Body))).toEqual({
      kind: "header",
      length: 52,
      source: "2001:db8::5",
    });
    const tlvs = [0x04, 0x00, 0x03, 0x61, 0x62, 0x63, 0xea, 0x00, 0x01, 0x7f];
    const withTlvs = [...v2(0x21, 0x11, [...ipv4Body, ...tlvs]), 0x16, 0x03];
    expect(parseProxyHeader(Uint8Array.from(withTlvs))).toEqual({
      kind: "header",
      length: 38,
      source: "203.0.113.7",
    });
  });

  test("IPv4-mapped IPv6 reads as IPv4", () => {
    const mapped = [...Array(10).fill(0), 0xff, 0xff, 198, 51, 100, 9, ...Array(16).fill(0), 0, 1, 0, 2];
    expect(parseProxyHeader(v2(0x21, 0x21, mapped))).toMatchObject({ source: "198.51.100.9" });
  });

  test("LOCAL (a balancer's health check), UNSPEC and AF_UNIX keep the socket's peer", () => {
    expect(parseProxyHeader(v2(0x20, 0x00, []))).toEqual({ kind: "header", length: 16, source: undefined });
    expect(parseProxyHeader(v2(0x20, 0x11, ipv4Body))).toEqual({
      kind: "header",
      length: 28,
      source: undefined,
    });
    expect(parseProxyHeader(v2(0x21, 0x00, []))).toEqual({ kind: "header", length: 16, source: undefined });
    expect(parseProxyHeader(v2(0x21, 0x31, Array(216).fill(0)))).toMatchObject({ source: undefined });
  });

  test("truncated: incomplete while bytes are missing; addresses shorter than the family: invalid", () => {
    const whole = v2(0x21, 0x11, ipv4Body);
    for (let n = 1; n < whole.length; n++)
      expect(parseProxyHeader(whole.subarray(0, n)).kind).toBe("incomplete");
    expect(parseProxyHeader(v2(0x21, 0x11, ipv4Body.slice(0, 8)))).toMatchObject({ kind: "invalid" });
    expect(parseProxyHeader(v2(0x21, 0x21, ipv4Body))).toMatchObject({ kind: "invalid" });
    expect(parseProxyHeader(v2(0x21, 0x31, Array(100).fill(0)))).toMatchObject({ kind: "invalid" });
  });

  test("wrong signature, version, command, family or transport, and oversized headers are invalid", () => {
    const wrongSig = v2(0x21, 0x11, ipv4Body);
    wrongSig[11] = 0x0b;
    expect(parseProxyHeader(wrongSig).kind).toBe("invalid");
    expect(parseProxyHeader(v2(0x11, 0x11, ipv4Body))).toMatchObject({
      reason: expect.stringContaining("version"),
    });
    expect(parseProxyHeader(v2(0x22, 0x11, ipv4Body))).toMatchObject({
      reason: expect.stringContaining("command"),
    });
    expect(parseProxyHeader(v2(0x21, 0x41, ipv4Body))).toMatchObject({
      reason: expect.stringContaining("family"),
    });
    expect(parseProxyHeader(v2(0x21, 0x13, ipv4Body))).toMatchObject({
      reason: expect.stringContaining("transport"),
    });
    // Refused from its 16 bytes alone: an oversized length is never waited for.
    expect(parseProxyHeader(v2(0x21, 0x11, [], 0xffff))).toMatchObject({ kind: "invalid" });
    expect(parseProxyHeader(v2(0x21, 0x11, [], MAX_V2_BYTES - 16)).kind).toBe("incomplete");
    expect(parseProxyHeader(v2(0x21, 0x11, [], MAX_V2_BYTES - 15)).kind).toBe("invalid");
  });
});

describe("ProxyPreamble", () => {
  test("gathers a header split over reads and gives the bytes after it", () => {
    const p = new ProxyPreamble();
    const bytes = Buffer.from("PROXY TCP4 203.0.113.7 10.0.0.1 1 2\r\nGET / HTTP/1.1\r\n\r\n");
    expect(p.feed(bytes.subarray(0, 10)).kind).toBe("wait");
    const step = p.feed(bytes.subarray(10));
    expect(step.kind).toBe("done");
    if (step.kind === "done") {
      expect(step.source).toBe("203.0.113.7");
      expect(step.rest.toString()).toBe("GET / HTTP/1.1\r\n\r\n");
    }
  });

  test("a connection without a header is refused at its first byte", () => {
    expect(new ProxyPreamble().feed(Buffer.from("GET / HTTP/1.1\r\n"))).toMatchObject({ kind: "refused" });
    expect(new ProxyPreamble().feed(Uint8Array.from([0x16, 0x03, 0x01]))).toMatchObject({ kind: "refused" });
  });

  test("which listeners read one", () => {
    expect(readsProxyHeader(undefined, 80)).toBe(false);
    expect(readsProxyHeader("none", 80)).toBe(false);
    expect(readsProxyHeader("all", 80)).toBe(true);
    expect(readsProxyHeader([443], 80)).toBe(false);
    expect(readsProxyHeader([443], 443)).toBe(true);
  });
});

describe("TrustedProxies and forwardedFor", () => {
  const t = new TrustedProxies(["10.0.0.0/8", "fd00::/8"]);

  test("an untrusted peer is the client whatever its X-Forwarded-For says, and only the peer goes upstream", () => {
    expect(t.trusts("203.0.113.9")).toBe(false);
    expect(t.client("203.0.113.9", "1.2.3.4")).toBe("203.0.113.9");
    expect(forwardedFor("203.0.113.9", "1.2.3.4", false)).toBe("203.0.113.9");
  });

  test("a trusted peer: the chain is walked right to left past trusted hops, and the peer appended", () => {
    expect(t.client("10.0.0.1", "6.6.6.6, 1.2.3.4, 10.0.0.7")).toBe("1.2.3.4");
    expect(forwardedFor("10.0.0.1", "1.2.3.4", true)).toBe("1.2.3.4, 10.0.0.1");
    expect(forwardedFor("10.0.0.1", null, true)).toBe("10.0.0.1");
    expect(new TrustedProxies([]).none).toBe(true);
  });
});
