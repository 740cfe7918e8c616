/**
 * The PROXY protocol header (HAProxy's proxy-protocol.txt, versions 1 and 2) a load balancer sends at the
 * start of a connection to name the client it accepted. Called on the bytes read so far: `incomplete`
 * while they are a prefix of a header, `invalid` as soon as they cannot be one. Every length is checked
 * against what is there, so hostile input gives `invalid`, never an exception or a read past the buffer.
 * v1 is one text line of at most 107 bytes; v2 a 16-byte binary header whose length field is capped at
 * MAX_V2_BYTES (TLVs are skipped: nothing in them changes who the client is).
 */
import { isIPv4, isIPv6 } from "../../model/ip-syntax.ts";

export type ProxyHeaderResult =
  | { readonly kind: "incomplete" }
  | { readonly kind: "invalid"; readonly reason: string }
  /**
   * A whole header of `length` bytes. `source`: the client it names; undefined for v1 `UNKNOWN`, v2
   * `LOCAL` (the balancer's own health check) and v2 families without an IP address, where the
   * connection's own peer stands.
   */
  | { readonly kind: "header"; readonly length: number; readonly source: string | undefined };

/** The longest v1 line, CRLF included (the specification's own bound). */
export const MAX_V1_BYTES = 107;
/** The largest v2 header accepted: 16 bytes and the addresses (at most 216) with room for TLVs. */
export const MAX_V2_BYTES = 16 + 2048;

const V1_PREFIX = Buffer.from("PROXY ");
const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);

const INCOMPLETE = { kind: "incomplete" } as const;

function invalid(reason: string): ProxyHeaderResult {
  return { kind: "invalid", reason };
}

/** `buf[0, n)` equals the first n bytes of `sig` (n = the shorter). */
function prefixOf(buf: Uint8Array, sig: Uint8Array): boolean {
  const n = Math.min(buf.length, sig.length);
  for (let i = 0; i < n; i++) if (buf[i] !== sig[i]) return false;
  return true;
}

export function parseProxyHeader(buf: Uint8Array): ProxyHeaderResult {
  if (buf.length === 0) return INCOMPLETE;
  if (prefixOf(buf, V2_SIGNATURE)) return buf.length < 16 ? INCOMPLETE : parseV2(buf);
  if (prefixOf(buf, V1_PREFIX)) return buf.length < V1_PREFIX.length ? INCOMPLETE : parseV1(buf);
  return invalid("no PROXY protocol header");
}

function parseV1(buf: Uint8Array): ProxyHeaderResult {
  const lf = buf.indexOf(0x0a);
  if (lf < 0) return buf.length >= MAX_V1_BYTES ? invalid("v1 line longer than 107 bytes") : INCOMPLETE;
  if (lf + 1 > MAX_V1_BYTES) return invalid("v1 line longer than 107 bytes");
  if (buf[lf - 1] !== 0x0d) return invalid("v1 line does not end with CRLF");
  for (let i = 0; i < lf - 1; i++) {
    const c = buf[i] as number;
    if (c < 0x20 || c > 0x7e) return invalid("v1 line has a byte that is not printable ASCII");
  }
  const line = Buffer.from(buf.subarray(0, lf - 1)).toString("latin1");
  const length = lf + 1;
  const parts = line.split(" ");
  // "PROXY UNKNOWN" may be followed by anything: the receiver ignores it and keeps the real peer.
  if (parts[1] === "UNKNOWN") return { kind: "header", length, source: undefined };
  if (parts.length !== 6) return invalid("v1 line does not have six fields");
  const [, family, src, dst, srcPort, dstPort] = parts as [string, string, string, string, string, string];
  const isAddress = family === "TCP4" ? isIPv4 : family === "TCP6" ? isIPv6 : undefined;
  if (isAddress === undefined)
    return invalid(`v1 family "${family.slice(0, 16)}" is not TCP4, TCP6 or UNKNOWN`);
  if (!isAddress(src) || !isAddress(dst) || src.includes("%") || dst.includes("%"))
    return invalid(`v1 address is not a ${family} address`);
  if (!isPort(srcPort) || !isPort(dstPort)) return invalid("v1 port is not a number from 0 to 65535");
  return { kind: "header", length, source: src };
}

/** A decimal port without a leading zero (the specification's own form), 0 to 65535. */
function isPort(s: string): boolean {
  if (!/^(0|[1-9][0-9]{0,4})$/.test(s)) return false;
  return Number(s) <= 65535;
}

function parseV2(buf: Uint8Array): ProxyHeaderResult {
  const verCmd = buf[12] as number;
  if (verCmd >> 4 !== 2) return invalid(`v2 version ${verCmd >> 4} is not 2`);
  const command = verCmd & 0x0f;
  if (command > 1) return invalid(`v2 command ${command} is neither LOCAL nor PROXY`);
  const famProto = buf[13] as number;
  const family = famProto >> 4;
  const transport = famProto & 0x0f;
  const rest = ((buf[14] as number) << 8) | (buf[15] as number);
  const length = 16 + rest;
  if (length > MAX_V2_BYTES) return invalid(`v2 header of ${length} bytes is over ${MAX_V2_BYTES}`);
  if (family > 3) return invalid(`v2 address family ${family} is unknown`);
  if (transport > 2) return invalid(`v2 transport ${transport} is unknown`);
  if (buf.length < length) return INCOMPLETE;
  // LOCAL: the balancer's own connection (a health check); the addresses, if any, are ignored.
  if (command === 0) return { kind: "header", length, source: undefined };
  if (family === 1) {
    if (rest < 12) return invalid("v2 IPv4 addresses are truncated");
    return { kind: "header", length, source: `${buf[16]}.${buf[17]}.${buf[18]}.${buf[19]}` };
  }
  if (family === 2) {
    if (rest < 36) return invalid("v2 IPv6 addresses are truncated");
    return { kind: "header", length, source: ipv6Text(buf, 16) };
  }
  // UNSPEC, or AF_UNIX (no IP address to name): the connection's own peer stands.
  if (family === 3 && rest < 216) return invalid("v2 unix addresses are truncated");
  return { kind: "header", length, source: undefined };
}

/** Sixteen bytes at `at` as an IPv6 address (RFC 5952 form; an IPv4-mapped one as dotted IPv4). */
function ipv6Text(buf: Uint8Array, at: number): string {
  const groups: number[] = [];
  for (let i = 0; i < 8; i++)
    groups.push(((buf[at + 2 * i] as number) << 8) | (buf[at + 2 * i + 1] as number));
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff)
    return `${buf[at + 12]}.${buf[at + 13]}.${buf[at + 14]}.${buf[at + 15]}`;
  // The longest run of two or more zero groups becomes "::".
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(":");
  return `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}`;
}
