import { describe, expect, test } from "bun:test";
import { hashScheme } from "../../model/htpasswd-syntax.ts";
import { apr1 } from "./apr1.ts";
import { verifyPassword } from "./password-hash.ts";

// Vectors from `openssl passwd -apr1 -salt <salt> <password>` (OpenSSL 3), and PHP's documented bcrypt one.
const apr1Vectors: [string, string, string][] = [
  ["secret", "abcdefgh", "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/"],
  ["p@ss:word", "Xy.z/12", "$apr1$Xy.z/12$dKIP.9dzRuows1MBhEAK21"],
  ["x", "", "$apr1$$jYtXyIcDHukcQfHjblNhq/"],
  ["a-much-longer-password-than-sixteen-bytes", "sALT1234", "$apr1$sALT1234$aHXW09dpBeQ2No28UM8P61"],
  ["é", "q", "$apr1$q$T4ax3VAx6.KQXJbwbWfbL."],
  ["correct horse", "rB9x", "$apr1$rB9x$QU2yJVmiYs83wTMrcUZto."],
];
const phpBcrypt = "$2y$07$BCryptRequires22Chrcte/VlQH0piJtjXl.0t1XkA8pw9dMXTpOq";

describe("apr1 (MD5-crypt as htpasswd -m writes it)", () => {
  test.each(apr1Vectors)("%p with salt %p", (password, salt, expected) => {
    expect(apr1(password, salt)).toBe(expected);
    expect(verifyPassword(expected, password)).toBe(true);
    expect(verifyPassword(expected, `${password}!`)).toBe(false);
  });
});

describe("verifyPassword", () => {
  test("{SHA}: base64 SHA-1 (openssl dgst -sha1 -binary | base64)", () => {
    expect(verifyPassword("{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "password")).toBe(true);
    expect(verifyPassword("{SHA}87u9ZqY9S/F0eUBXjsPQEDUw4h0=", "hunter2")).toBe(true);
    expect(verifyPassword("{SHA}87u9ZqY9S/F0eUBXjsPQEDUw4h0=", "hunter3")).toBe(false);
  });

  test("{SSHA}: SHA-1 of password and salt, the salt appended", () => {
    expect(verifyPassword("{SSHA}gK+fFFujqnweTpwCQ7Sp02gQxCJzYWx0", "hunter2")).toBe(true);
    expect(verifyPassword("{SSHA}gK+fFFujqnweTpwCQ7Sp02gQxCJzYWx0", "hunter")).toBe(false);
  });

  test("bcrypt $2y$ (htpasswd -B), $2a$ and $2b$ verify asynchronously", async () => {
    const pending = verifyPassword(phpBcrypt, "rasmuslerdorf");
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toBe(true);
    expect(await verifyPassword(phpBcrypt, "rasmuslerdorF")).toBe(false);
    const b = await Bun.password.hash("s3cret", { algorithm: "bcrypt", cost: 4 });
    for (const prefix of ["$2a$", "$2b$", "$2y$"]) {
      const h = prefix + b.slice(4);
      expect(hashScheme(h)).toBe("bcrypt");
      expect(await verifyPassword(h, "s3cret")).toBe(true);
      expect(await verifyPassword(h, "s3creT")).toBe(false);
    }
  });

  test("bcrypt reads 72 bytes, as htpasswd's does (Bun would pre-hash longer input)", async () => {
    const h = await Bun.password.hash("a".repeat(72), { algorithm: "bcrypt", cost: 4 });
    expect(await verifyPassword(h, "a".repeat(80))).toBe(true);
    expect(await verifyPassword(h, "a".repeat(71))).toBe(false);
  });

  test("schemes Gatehouse does not verify never match", () => {
    for (const h of [
      "plaintext",
      "abJnggxhB/yWI",
      "$5$salt$abc",
      "$6$salt$abc",
      "{SHA}short",
      "$apr1$toolongsalt$x",
    ]) {
      expect(hashScheme(h)).toBeUndefined();
      expect(verifyPassword(h, "plaintext")).toBe(false);
    }
  });
});
