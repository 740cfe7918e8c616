import { describe, expect, test } from "bun:test";
import { BlockList, isIP } from "node:net";
import { addressSet, clientAddress, parseAddress, parseRange, setHas } from "./ip-ranges.ts";

const out = new Uint32Array(4);

function has(entries: readonly string[], client: string): boolean {
  const family = clientAddress(client, out);
  if (family === 0) throw new Error(`not an address: ${client}`);
  return setHas(addressSet(entries), family, out);
}

describe("parseAddress", () => {
  test("reads addresses as node:net does", () => {
    const samples = [
      "1.2.3.4",
      "255.255.255.255",
      "0.0.0.0",
      "256.1.1.1",
      "01.2.3.4",
      "1.2.3",
      "1.2.3.4.5",
      "1..3.4",
      "::",
      "::1",
      "1::",
      "fe80::1:2",
      "2001:db8::ff00:42:8329",
      "2001:0db8:0000:0000:0000:ff00:0042:8329",
      "1:2:3:4:5:6:7:8",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7::",
      "::ffff:10.1.2.3",
      "::10.1.2.3",
      "1:2:3:4:5:6:1.2.3.4",
      "1:2:3:4:5:6:7:1.2.3.4",
      ":::",
      "1:::2",
      "1::2::3",
      ":1::2",
      "1::2:",
      "12345::",
      "g::1",
      "",
      "a.b.c.d",
      " 1.2.3.4",
    ];
    for (const s of samples) expect([s, parseAddress(s, out)]).toEqual([s, isIP(s) as 0 | 4 | 6]);
  });

  test("words: IPv4 in one, IPv6 in four, most significant first", () => {
    expect(parseAddress("10.0.0.1", out)).toBe(4);
    expect(out[0]).toBe(0x0a000001);
    expect(parseAddress("2001:db8::1:2", out)).toBe(6);
    expect([...out]).toEqual([0x20010db8, 0, 0, 0x00010002]);
    expect(parseAddress("::ffff:127.0.0.1", out)).toBe(6);
    expect([...out]).toEqual([0, 0, 0xffff, 0x7f000001]);
  });

  test("a zone is refused unless asked for (client addresses may carry one, lists may not)", () => {
    expect(parseAddress("fe80::1%eth0", out)).toBe(0);
    expect(parseAddress("fe80::1%eth0", out, true)).toBe(6);
    expect(out[3]).toBe(1);
  });
});

describe("parseRange", () => {
  test("CIDRs and bare addresses, as Go's ParseCIDR/ParseIP read them", () => {
    expect(parseRange("10.0.0.0/8")).toEqual({ family: 4, first: [0x0a000000], last: [0x0affffff] });
    expect(parseRange("10.1.2.3/8")).toEqual({ family: 4, first: [0x0a000000], last: [0x0affffff] });
    expect(parseRange("1.2.3.4")).toEqual({ family: 4, first: [0x01020304], last: [0x01020304] });
    expect(parseRange("0.0.0.0/0")).toEqual({ family: 4, first: [0], last: [0xffffffff] });
    expect(parseRange("::1")?.first).toEqual([0, 0, 0, 1]);
    expect(parseRange("2001:db8::/33")).toEqual({
      family: 6,
      first: [0x20010db8, 0, 0, 0],
      last: [0x20010db8, 0x7fffffff, 0xffffffff, 0xffffffff],
    });
  });

  test("bad input is refused", () => {
    for (const bad of [
      "10.0.0.0/33",
      "::/129",
      "10.0.0.0/",
      "10.0.0.0/-1",
      "10.0.0.0/8/8",
      "10.0.0.0/ 8",
      "10.0.0/8",
      "garbage",
      "",
      "/8",
      "fe80::1%eth0/64",
      "10.0.0.0/1000",
      "10.0.0.0/08", // netip.ParsePrefix refuses a zero-padded length
      "::/00",
      "10.0.0.0/008",
    ])
      expect([bad, parseRange(bad)]).toEqual([bad, undefined]);
  });

  test("a mapped CIDR of /96 or longer is the IPv4 CIDR it spells", () => {
    expect(parseRange("::ffff:10.0.0.0/104")).toEqual({ family: 4, first: [0x0a000000], last: [0x0affffff] });
    expect(parseRange("::ffff:0:0/64")?.family).toBe(6);
  });
});

describe("addressSet and setHas", () => {
  test("IPv4, IPv6 and IPv4-mapped IPv6 clients", () => {
    const list = ["10.0.0.0/8", "192.168.1.7", "2001:db8::/32", "::1"];
    expect(has(list, "10.200.3.4")).toBe(true);
    expect(has(list, "11.0.0.0")).toBe(false);
    expect(has(list, "192.168.1.7")).toBe(true);
    expect(has(list, "192.168.1.8")).toBe(false);
    expect(has(list, "::ffff:10.1.1.1")).toBe(true);
    expect(has(list, "::ffff:127.0.0.1")).toBe(false);
    expect(has(list, "::1")).toBe(true);
    expect(has(list, "::2")).toBe(false);
    expect(has(list, "2001:db8:ffff::9")).toBe(true);
    expect(has(list, "2001:db9::")).toBe(false);
    expect(has(["127.0.0.1/32"], "::ffff:127.0.0.1")).toBe(true);
    expect(has(["0.0.0.0/0"], "255.255.255.255")).toBe(true);
    expect(has(["::/0"], "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")).toBe(true);
    // An IPv6 list does not hold IPv4 clients, mapped or not (nginx: `deny ::/0` is not `deny all`).
    expect(has(["::/0"], "::ffff:1.2.3.4")).toBe(false);
    expect(has([], "1.2.3.4")).toBe(false);
  });

  test("answers as node:net's BlockList on random lists and addresses", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const v4 = () => [rand(4) * 64, rand(256), rand(256), rand(256)].join(".");
    const v6 = () =>
      `2001:db8:${rand(4).toString(16)}::${rand(65536).toString(16)}:${rand(65536).toString(16)}`;
    for (let round = 0; round < 200; round++) {
      const entries: string[] = [];
      const block = new BlockList();
      for (let i = 0; i < 1 + rand(12); i++) {
        const six = rand(2) === 1;
        const address = six ? v6() : v4();
        const prefix = six ? 32 + rand(97) : rand(33);
        entries.push(`${address}/${prefix}`);
        block.addSubnet(address, prefix, six ? "ipv6" : "ipv4");
      }
      const set = addressSet(entries);
      for (let i = 0; i < 50; i++) {
        const six = rand(2) === 1;
        const address = six ? v6() : v4();
        const family = clientAddress(address, out);
        expect(family).toBe(six ? 6 : 4);
        const want = block.check(address, six ? "ipv6" : "ipv4");
        if (setHas(set, family as 4 | 6, out) !== want) throw new Error(`${address} in ${entries}: ${want}`);
      }
    }
  });
});
