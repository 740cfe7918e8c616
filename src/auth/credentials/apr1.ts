/**
 * Apache's `$apr1$` password hash (MD5-crypt with Apache's magic), as `htpasswd -m` and
 * `openssl passwd -apr1` write it: `$apr1$<salt, up to 8 chars>$<22 chars>`. Written from the
 * algorithm's public description (Poul-Henning Kamp's md5crypt, the magic string swapped for
 * `$apr1$`); the tests check it against `openssl passwd -apr1` output.
 */
import { createHash } from "node:crypto";

const MAGIC = "$apr1$";
const ITOA64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function md5(...parts: (Buffer | string)[]): Buffer {
  const h = createHash("md5");
  for (const p of parts) h.update(p);
  return h.digest();
}

/** `count` characters of ITOA64 for the 24-bit value `v`, least significant 6 bits first. */
function to64(v: number, count: number): string {
  let out = "";
  let n = v;
  for (let i = 0; i < count; i++) {
    out += ITOA64[n & 0x3f];
    n >>>= 6;
  }
  return out;
}

/** The full `$apr1$salt$hash` string for `password` and `salt` (cut to 8 characters, as htpasswd does). */
export function apr1(password: string | Buffer, salt: string): string {
  const pw = typeof password === "string" ? Buffer.from(password, "utf8") : password;
  const s = salt.slice(0, 8);
  const alternate = md5(pw, s, pw);
  const ctx = createHash("md5");
  ctx.update(pw);
  ctx.update(MAGIC);
  ctx.update(s);
  for (let left = pw.length; left > 0; left -= 16) ctx.update(alternate.subarray(0, Math.min(16, left)));
  // For each bit of the length: a zero byte when set, the password's first byte when clear.
  for (let i = pw.length; i > 0; i >>>= 1) ctx.update(i & 1 ? Buffer.of(0) : pw.subarray(0, 1));
  let final: Buffer = ctx.digest();
  for (let i = 0; i < 1000; i++) {
    const parts: (Buffer | string)[] = [];
    parts.push(i & 1 ? pw : final);
    if (i % 3 !== 0) parts.push(s);
    if (i % 7 !== 0) parts.push(pw);
    parts.push(i & 1 ? final : pw);
    final = md5(...parts);
  }
  const f = final;
  const b = (i: number) => f[i] as number;
  const hash =
    to64((b(0) << 16) | (b(6) << 8) | b(12), 4) +
    to64((b(1) << 16) | (b(7) << 8) | b(13), 4) +
    to64((b(2) << 16) | (b(8) << 8) | b(14), 4) +
    to64((b(3) << 16) | (b(9) << 8) | b(15), 4) +
    to64((b(4) << 16) | (b(10) << 8) | b(5), 4) +
    to64(b(11), 2);
  return `${MAGIC}${s}$${hash}`;
}

/** The salt of a stored `$apr1$salt$hash`, or undefined when it is not one. */
export function apr1Salt(stored: string): string | undefined {
  const m = /^\$apr1\$([^$]{0,8})\$[./0-9A-Za-z]{22}$/.exec(stored);
  return m?.[1];
}
