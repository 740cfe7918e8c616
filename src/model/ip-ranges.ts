/**
 * Client address lists as sorted, merged ranges of numbers, for the IP allow and deny lists of routes
 * (model/auth.ts `IPAccessList`). Translation checks each entry with `parseRange`; the proxy compiles a
 * list once (`addressSet`) and looks a client up with `parseAddress` + `setHas`: a scan of the address's
 * characters into a fixed scratch array and a binary search over the ranges, no allocation per request
 * (node:net's BlockList walks its rules one by one and parses the address into objects on every check).
 * IPv4 is one 32-bit word; IPv6 four, most significant first. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`,
 * as a dual-stack socket names an IPv4 peer) is the IPv4 address it carries, as nginx's access module
 * matches it; a mapped CIDR of /96 or longer is the IPv4 CIDR it spells. The grammar is Go's
 * net.ParseCIDR/ParseIP as ingress-nginx reads its source ranges: dotted quads without leading zeros,
 * RFC 4291 IPv6 text (`::`, an IPv4 tail), no zone in a CIDR.
 */

/** One entry of a list as a range: `first`..`last` inclusive, 1 word (IPv4) or 4 (IPv6). */
export interface AddressRange {
  readonly family: 4 | 6;
  readonly first: readonly number[];
  readonly last: readonly number[];
}

/** A compiled list: IPv4 ranges as [first, last, …] pairs, IPv6 as 8 words per range; both sorted, merged. */
export interface AddressSet {
  readonly v4: Uint32Array;
  readonly v6: Uint32Array;
}

const groups = new Uint16Array(8);

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** A dotted quad in text[from, to) as an unsigned number; -1 when it is not one. */
function dottedQuad(text: string, from: number, to: number): number {
  let value = 0;
  let parts = 0;
  let i = from;
  while (parts < 4) {
    const start = i;
    let part = 0;
    while (i < to && i - start < 3) {
      const c = text.charCodeAt(i);
      if (c < 48 || c > 57) break;
      part = part * 10 + (c - 48);
      i++;
    }
    const digits = i - start;
    if (digits === 0 || part > 255 || (digits > 1 && text.charCodeAt(start) === 48)) return -1;
    value = value * 256 + part;
    parts++;
    if (parts < 4) {
      if (i >= to || text.charCodeAt(i) !== 46) return -1;
      i++;
    }
  }
  return i === to ? value : -1;
}

/**
 * `text` (an address: no brackets, no port) into `out`: 4 with the IPv4 address in out[0], 6 with the four
 * words of an IPv6 address, 0 when it is not an address. `zone`: a `%zone` suffix is allowed (and ignored).
 */
export function parseAddress(text: string, out: Uint32Array, zone = false): 0 | 4 | 6 {
  let end = text.length;
  if (zone) {
    const pct = text.indexOf("%");
    if (pct > 0) end = pct;
  }
  if (end === 0) return 0;
  if (text.indexOf(":") < 0) {
    const v4 = dottedQuad(text, 0, end);
    if (v4 < 0) return 0;
    out[0] = v4;
    return 4;
  }
  let n = 0;
  let gap = -1;
  let i = 0;
  if (text.charCodeAt(0) === 58) {
    if (end < 2 || text.charCodeAt(1) !== 58) return 0;
    gap = 0;
    i = 2;
  }
  while (i < end) {
    let j = i;
    let v = 0;
    while (j < end && j - i < 5) {
      const h = hexValue(text.charCodeAt(j));
      if (h < 0) break;
      v = v * 16 + h;
      j++;
    }
    if (j < end && text.charCodeAt(j) === 46) {
      const v4 = n <= 6 ? dottedQuad(text, i, end) : -1;
      if (v4 < 0) return 0;
      groups[n++] = v4 >>> 16;
      groups[n++] = v4 & 0xffff;
      i = end;
      break;
    }
    if (j === i || j - i > 4 || n === 8) return 0;
    groups[n++] = v;
    if (j === end) {
      i = j;
      break;
    }
    if (text.charCodeAt(j) !== 58) return 0;
    j++;
    if (j < end && text.charCodeAt(j) === 58) {
      if (gap >= 0) return 0;
      gap = n;
      j++;
    } else if (j === end) return 0;
    i = j;
  }
  if (gap < 0 ? n !== 8 : n > 7) return 0;
  const fill = 8 - n;
  for (let w = 0; w < 4; w++) {
    const hi = groupAt(2 * w, gap, fill);
    const lo = groupAt(2 * w + 1, gap, fill);
    out[w] = ((hi << 16) | lo) >>> 0;
  }
  return 6;
}

/** The group at position `k` of the expanded address (zeros where `::` stood). */
function groupAt(k: number, gap: number, fill: number): number {
  if (gap < 0 || k < gap) return groups[k] as number;
  if (k < gap + fill) return 0;
  return groups[k - fill] as number;
}

/** True when the IPv6 words in `out` are an IPv4-mapped address (`::ffff:0:0/96`). */
function isMapped(out: Uint32Array): boolean {
  return out[0] === 0 && out[1] === 0 && out[2] === 0xffff;
}

/** A client address for lookups: mapped IPv6 made IPv4; 0 when unreadable. */
export function clientAddress(text: string, out: Uint32Array): 0 | 4 | 6 {
  const family = parseAddress(text, out, true);
  if (family === 6 && isMapped(out)) {
    out[0] = out[3] as number;
    return 4;
  }
  return family;
}

const scratch = new Uint32Array(4);

/**
 * `a.b.c.d/n`, `x::y/n` or a bare address as a range; undefined when it is not one. The prefix length
 * is read as Go's netip.ParsePrefix reads it: decimal without a leading zero (`/8`, `/0`, never `/08`),
 * which is stricter than net.ParseCIDR; a zero-padded length is more likely a typo than intended.
 */
export function parseRange(text: string): AddressRange | undefined {
  const slash = text.indexOf("/");
  const address = slash < 0 ? text : text.slice(0, slash);
  let family = parseAddress(address, scratch);
  if (family === 0) return undefined;
  let prefix = family === 4 ? 32 : 128;
  if (slash >= 0) {
    const bits = text.slice(slash + 1);
    if (!/^(0|[1-9][0-9]{0,2})$/.test(bits) || Number(bits) > prefix) return undefined;
    prefix = Number(bits);
  }
  let words = family === 4 ? [scratch[0] as number] : Array.from(scratch);
  if (family === 6 && isMapped(scratch) && prefix >= 96) {
    family = 4;
    words = [scratch[3] as number];
    prefix -= 96;
  }
  const first: number[] = [];
  const last: number[] = [];
  for (let w = 0; w < words.length; w++) {
    const bits = Math.min(32, Math.max(0, prefix - 32 * w));
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    first.push(((words[w] as number) & mask) >>> 0);
    last.push(((words[w] as number) | ~mask) >>> 0);
  }
  return { family, first, last };
}

function compareWords(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] as number) < (b[i] as number) ? -1 : 1;
  return 0;
}

/** `words` + 1 (as one number of that many words); undefined past the top. */
function next(words: readonly number[]): number[] | undefined {
  const out = [...words];
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] !== 0xffffffff) {
      out[i] = (out[i] as number) + 1;
      return out;
    }
    out[i] = 0;
  }
  return undefined;
}

function merged(ranges: AddressRange[]): AddressRange[] {
  ranges.sort((a, b) => compareWords(a.first, b.first));
  const out: AddressRange[] = [];
  for (const r of ranges) {
    const top = out[out.length - 1];
    const after = top === undefined ? undefined : next(top.last);
    if (top !== undefined && (after === undefined || compareWords(r.first, after) <= 0)) {
      if (compareWords(r.last, top.last) > 0) out[out.length - 1] = { ...top, last: r.last };
    } else out.push(r);
  }
  return out;
}

/** The entries as one compiled set; entries that are not ranges are left out (translation refused them). */
export function addressSet(entries: readonly string[]): AddressSet {
  const v4: AddressRange[] = [];
  const v6: AddressRange[] = [];
  for (const e of entries) {
    const r = parseRange(e);
    if (r !== undefined) (r.family === 4 ? v4 : v6).push(r);
  }
  return {
    v4: Uint32Array.from(merged(v4).flatMap((r) => [...r.first, ...r.last])),
    v6: Uint32Array.from(merged(v6).flatMap((r) => [...r.first, ...r.last])),
  };
}

/** Is the address `clientAddress` left in `words` in `set`? Binary search for the last range starting at or below it. */
export function setHas(set: AddressSet, family: 4 | 6, words: Uint32Array): boolean {
  if (family === 4) {
    const r = set.v4;
    const x = words[0] as number;
    let lo = 0;
    let hi = r.length / 2 - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((r[2 * mid] as number) > x) hi = mid - 1;
      else if ((r[2 * mid + 1] as number) < x) lo = mid + 1;
      else return true;
    }
    return false;
  }
  const r = set.v6;
  let lo = 0;
  let hi = r.length / 8 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (compare6(r, 8 * mid, words) > 0) hi = mid - 1;
    else if (compare6(r, 8 * mid + 4, words) < 0) lo = mid + 1;
    else return true;
  }
  return false;
}

/** The four words of `r` at `at` against `words`: -1, 0 or 1. */
function compare6(r: Uint32Array, at: number, words: Uint32Array): number {
  for (let i = 0; i < 4; i++) {
    const a = r[at + i] as number;
    const b = words[i] as number;
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}
