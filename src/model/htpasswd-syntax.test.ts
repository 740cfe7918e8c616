import { expect, test } from "bun:test";
import { hashScheme, htpasswdUsers, parseHtpasswd } from "./htpasswd-syntax.ts";

const sha = "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=";
const apr1 = "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/";
const bcrypt = "$2y$07$BCryptRequires22Chrcte/VlQH0piJtjXl.0t1XkA8pw9dMXTpOq";

test("schemes as htpasswd writes them; the rest is no scheme", () => {
  expect([bcrypt, bcrypt.replace("$2y$", "$2a$"), bcrypt.replace("$2y$", "$2b$")].map(hashScheme)).toEqual([
    "bcrypt",
    "bcrypt",
    "bcrypt",
  ]);
  expect(hashScheme(apr1)).toBe("apr1");
  expect(hashScheme(sha)).toBe("sha1");
  expect(hashScheme("{SSHA}gK+fFFujqnweTpwCQ7Sp02gQxCJzYWx0")).toBe("ssha");
  for (const h of ["abJnggxhB/yWI", "$1$salt$hash", "$6$s$h", "{SHA}", "plain", `${bcrypt}x`, "$2x$07$abc"])
    expect(hashScheme(h)).toBeUndefined();
});

test("lines as nginx reads them: CRLF, comments, a third field, the first line of a name", () => {
  const t = parseHtpasswd(`# comment\r\nalice:${apr1}\r\n\r\nbob:${sha}:Bob B.\nalice:${sha}\n`);
  expect(t.users).toEqual([
    { name: "alice", passwordHash: apr1 },
    { name: "bob", passwordHash: sha },
  ]);
  expect(t.problems).toEqual(['line 5: user "alice" again; only the first line counts']);
});

test("a bad line refuses its user and never a later line of the same name; no hash is quoted", () => {
  const t = parseHtpasswd(`carol:secret\ncarol:${sha}\nno colon here\n:${sha}\ndave:\neve:${bcrypt}\n`);
  expect(t.users.map((u) => u.name)).toEqual(["eve"]);
  expect(t.problems).toHaveLength(5);
  expect(t.problems.join("\n")).not.toContain("secret");
  expect(t.problems.join("\n")).not.toContain(sha);
});

test("a user name with control characters is skipped; problems are capped", () => {
  expect(htpasswdUsers([["a\u0001b", sha]], (i) => `entry ${i}`).problems).toEqual([
    "entry 0: the user name holds control characters; skipped",
  ]);
  const many = parseHtpasswd(Array.from({ length: 15 }, (_, i) => `u${i}:plain`).join("\n"));
  expect(many.problems).toHaveLength(11);
  expect(many.problems.at(-1)).toBe("5 more lines refused");
});
