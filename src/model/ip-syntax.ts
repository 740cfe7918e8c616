/**
 * `isIP`, `isIPv4` and `isIPv6` of node:net, for translation, which checks addresses in hostnames,
 * pools and CIDRs: importing node:net (and the streams it loads) was a tenth of `gatehouse translate`'s
 * start. The grammar is node's own (lib/internal/net.js); ip-syntax.test.ts holds the answers equal to
 * node:net's.
 */

const v4Segment = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])";
const v4 = `(?:${v4Segment}\\.){3}${v4Segment}`;
const v6Segment = "(?:[0-9a-fA-F]{1,4})";
const ipv4 = new RegExp(`^${v4}$`);
const ipv6 = new RegExp(
  "^(?:" +
    `(?:${v6Segment}:){7}(?:${v6Segment}|:)|` +
    `(?:${v6Segment}:){6}(?:${v4}|:${v6Segment}|:)|` +
    `(?:${v6Segment}:){5}(?::${v4}|(?::${v6Segment}){1,2}|:)|` +
    `(?:${v6Segment}:){4}(?:(?::${v6Segment}){0,1}:${v4}|(?::${v6Segment}){1,3}|:)|` +
    `(?:${v6Segment}:){3}(?:(?::${v6Segment}){0,2}:${v4}|(?::${v6Segment}){1,4}|:)|` +
    `(?:${v6Segment}:){2}(?:(?::${v6Segment}){0,3}:${v4}|(?::${v6Segment}){1,5}|:)|` +
    `(?:${v6Segment}:){1}(?:(?::${v6Segment}){0,4}:${v4}|(?::${v6Segment}){1,6}|:)|` +
    `(?::(?:(?::${v6Segment}){0,5}:${v4}|(?::${v6Segment}){1,7}|:))` +
    ")(?:%[0-9a-zA-Z-.:]{1,})?$",
);

export function isIPv4(input: string): boolean {
  return ipv4.test(input);
}

export function isIPv6(input: string): boolean {
  // Every address has a `:`; checked first, a hostname never costs the pattern its compilation.
  return input.includes(":") && ipv6.test(input);
}

/** 4, 6, or 0 when `input` is not an address. */
export function isIP(input: string): 0 | 4 | 6 {
  return isIPv4(input) ? 4 : isIPv6(input) ? 6 : 0;
}
