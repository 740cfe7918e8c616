/**
 * ingress-nginx's basic authentication (src/translate/ingress/access/authentication.ts): `auth-type: basic`
 * with the users of `auth-secret`, as an htpasswd file (`auth-file`, key `auth`) or one entry per user
 * (`auth-map`), and `auth-realm` in the challenge. The Authorization header is not sent upstream (as
 * ingress-nginx clears it). Never open: digest, a missing Secret, a user whose line is bad.
 */
import { expect } from "bun:test";
import type { AnnotationCase } from "./harness.ts";

const secret = (name: string, data: Record<string, string>) =>
  `apiVersion: v1\nkind: Secret\nmetadata: { name: ${name}, namespace: cases }\nstringData: ${JSON.stringify(data)}\n`;

const basic = (user: string, pw: string) => `Basic ${Buffer.from(`${user}:${pw}`).toString("base64")}`;

// `openssl passwd -apr1 -salt abcdefgh secret`; `{SHA}` of "password"; PHP's documented bcrypt vector.
const aliceApr1 = "alice:$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/";
const bobSha = "bob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=";
const rasmusBcrypt = "$2y$07$BCryptRequires22Chrcte/VlQH0piJtjXl.0t1XkA8pw9dMXTpOq";
const htpasswd = `# staff\n${aliceApr1}\n${bobSha}\ncarol:plaintext\nbroken line\n`;

const fileAuth = { "auth-type": "basic", "auth-secret": "ba-file", "auth-realm": "Staff only" };
const covers = ["auth-type", "auth-secret", "auth-realm"];

export const cases: readonly AnnotationCase[] = [
  {
    name: "auth-type basic: no credentials get 401 with the realm's Basic challenge",
    covers,
    annotations: fileAuth,
    manifests: secret("ba-file", { auth: htpasswd }),
    request: { path: "/" },
    check(res) {
      expect(res.status).toBe(401);
      expect(res.seen).toBeUndefined();
      expect(res.headers.get("www-authenticate")).toBe('Basic realm="Staff only", charset="UTF-8"');
    },
  },
  {
    name: "auth-type basic: an apr1 user gets in; Authorization is not sent upstream",
    covers,
    annotations: fileAuth,
    request: { path: "/in", headers: { authorization: basic("alice", "secret") } },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.path).toBe("/in");
      expect(res.seen?.headers.authorization).toBeUndefined();
    },
  },
  {
    name: "auth-type basic: a {SHA} user gets in",
    covers,
    annotations: fileAuth,
    request: { path: "/", headers: { authorization: basic("bob", "password") } },
    check(res) {
      expect(res.status).toBe(200);
    },
  },
  {
    name: "auth-type basic: a wrong password gets 401",
    covers,
    annotations: fileAuth,
    request: { path: "/", headers: { authorization: basic("alice", "Secret") } },
    check(res) {
      expect(res.status).toBe(401);
      expect(res.seen).toBeUndefined();
    },
  },
  {
    name: "auth-type basic: a user whose hash is of no verified scheme (plain text) is refused",
    covers,
    annotations: fileAuth,
    request: { path: "/", headers: { authorization: basic("carol", "plaintext") } },
    check(res) {
      expect(res.status).toBe(401);
    },
  },
  {
    name: "auth-secret-type auth-map: each key a user, a bcrypt ($2y$) user gets in",
    covers: ["auth-type", "auth-secret", "auth-secret-type"],
    annotations: { "auth-type": "basic", "auth-secret": "cases/ba-map", "auth-secret-type": "auth-map" },
    manifests: secret("ba-map", { rasmus: rasmusBcrypt }),
    request: { path: "/", headers: { authorization: basic("rasmus", "rasmuslerdorf") } },
    check(res) {
      expect(res.status).toBe(200);
    },
  },
  {
    name: "auth-type digest is refused: 401 on every path, never the backend",
    covers: ["auth-type"],
    annotations: { "auth-type": "digest", "auth-secret": "ba-file" },
    request: { path: "/", headers: { authorization: basic("alice", "secret") } },
    check(res) {
      expect(res.status).toBe(401);
      expect(res.seen).toBeUndefined();
    },
  },
  {
    name: "auth-secret naming a Secret that does not exist: 401, never the backend",
    covers: ["auth-type", "auth-secret"],
    annotations: { "auth-type": "basic", "auth-secret": "ba-missing" },
    request: { path: "/", headers: { authorization: basic("alice", "secret") } },
    check(res) {
      expect(res.status).toBe(401);
      expect(res.seen).toBeUndefined();
    },
  },
  {
    name: "satisfy any: a client inside allowlist-source-range is served without credentials, Authorization dropped",
    covers: ["satisfy", "allowlist-source-range", "auth-type"],
    annotations: { ...fileAuth, satisfy: "any", "allowlist-source-range": "127.0.0.0/8,::1" },
    request: { path: "/any", headers: { authorization: basic("alice", "wrong") } },
    check(res) {
      expect([res.status, res.seen?.path]).toEqual([200, "/any"]);
      expect(res.seen?.headers.authorization).toBeUndefined();
    },
  },
  {
    name: "satisfy any: a client outside the allow list gets the Basic challenge (401, not 403)",
    covers: ["satisfy"],
    annotations: { ...fileAuth, satisfy: "any", "allowlist-source-range": "10.0.0.0/8" },
    request: { path: "/" },
    check(res) {
      expect([res.status, res.seen]).toEqual([401, undefined]);
      expect(res.headers.get("www-authenticate")).toBe('Basic realm="Staff only", charset="UTF-8"');
    },
  },
  {
    name: "satisfy any: outside the allow list, a valid user gets in",
    covers: ["satisfy"],
    annotations: { ...fileAuth, satisfy: "any", "allowlist-source-range": "10.0.0.0/8" },
    request: { path: "/in", headers: { authorization: basic("alice", "secret") } },
    check(res) {
      expect([res.status, res.seen?.path]).toEqual([200, "/in"]);
    },
  },
  {
    name: "satisfy any: denylist-source-range refuses a valid user (unlike nginx, a deny is never bypassed)",
    covers: ["satisfy", "denylist-source-range"],
    annotations: {
      ...fileAuth,
      satisfy: "any",
      "allowlist-source-range": "127.0.0.0/8,::1",
      "denylist-source-range": "127.0.0.1",
    },
    request: { path: "/", headers: { authorization: basic("alice", "secret") } },
    check(res) {
      expect([res.status, res.seen]).toEqual([403, undefined]);
    },
  },
  {
    name: "satisfy all (the default): inside the allow list, credentials are still required",
    covers: ["satisfy"],
    annotations: { ...fileAuth, satisfy: "all", "allowlist-source-range": "127.0.0.0/8,::1" },
    request: { path: "/" },
    check(res) {
      expect([res.status, res.seen]).toEqual([401, undefined]);
    },
  },
];
