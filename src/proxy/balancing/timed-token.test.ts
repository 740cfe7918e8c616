import { afterEach, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { parseSessionKeys, type SessionKeys, sessionKeys, setSessionKeys } from "./session-keys.ts";
import { dueForReissue, REISSUE_SHARE, signToken, type TimedToken, verifyToken } from "./timed-token.ts";

const before: SessionKeys = sessionKeys();
afterEach(() => setSessionKeys(before));

const t0 = 1_800_000_000_000;
const token: TimedToken = { endpoint: "0123456789abcdef", startMs: t0, lastMs: t0 + 5_000 };
const hour = { absoluteMs: 3_600_000, idleMs: 600_000 };

describe("timed session tokens", () => {
  test("sign, then verify: the same fields back; the format is endpoint.start.last.mac", () => {
    const signed = signToken("route", token);
    expect(signed).toMatch(/^0123456789abcdef\.[0-9a-z]+\.[0-9a-z]+\.[A-Za-z0-9_-]{22}$/);
    expect(verifyToken("route", signed, hour, t0 + 10_000)).toEqual(token);
  });

  test("tampered: any changed field, another session name, a cut MAC, junk: absent", () => {
    const signed = signToken("route", token);
    const [e, s, l, m] = signed.split(".") as [string, string, string, string];
    const now = t0 + 10_000;
    expect(verifyToken("route", `fedcba9876543210.${s}.${l}.${m}`, hour, now)).toBeUndefined();
    expect(verifyToken("route", `${e}.${(t0 + 1).toString(36)}.${l}.${m}`, hour, now)).toBeUndefined();
    expect(verifyToken("route", `${e}.${s}.${(t0 + 9_000).toString(36)}.${m}`, hour, now)).toBeUndefined();
    const flipped = `${m.slice(0, 5)}${m[5] === "A" ? "B" : "A"}${m.slice(6)}`;
    expect(verifyToken("route", `${e}.${s}.${l}.${flipped}`, hour, now)).toBeUndefined();
    expect(verifyToken("other", signed, hour, now)).toBeUndefined();
    expect(verifyToken("route", signed.slice(0, -2), hour, now)).toBeUndefined();
    for (const junk of ["", "0123456789abcdef", "a.b.c.d", `${signed}.x`, "x".repeat(5000)])
      expect(verifyToken("route", junk, hour, now)).toBeUndefined();
  });

  test("absoluteTimeout: ended that long after the start, whatever the activity", () => {
    const busy = { ...token, lastMs: t0 + 3_599_000 };
    const signed = signToken("route", busy);
    expect(verifyToken("route", signed, hour, t0 + 3_599_999)).toEqual(busy);
    expect(verifyToken("route", signed, hour, t0 + 3_600_000)).toBeUndefined();
  });

  test("idleTimeout: ended that long after the last use", () => {
    const signed = signToken("route", token);
    expect(verifyToken("route", signed, { idleMs: 1_000 }, token.lastMs + 999)).toEqual(token);
    expect(verifyToken("route", signed, { idleMs: 1_000 }, token.lastMs + 1_000)).toBeUndefined();
  });

  test("a last-use stamp far in the future is not trusted", () => {
    const ahead = { ...token, lastMs: t0 + 10 * 600_000 };
    expect(verifyToken("route", signToken("route", ahead), hour, t0)).toBeUndefined();
    const backwards = { ...token, lastMs: t0 - 1 };
    expect(verifyToken("route", signToken("route", backwards), hour, t0)).toBeUndefined();
  });

  test("rotation: a token signed by the previous key verifies; an unknown key's does not", () => {
    const old = randomBytes(32);
    setSessionKeys({ current: old });
    const signed = signToken("route", token);
    setSessionKeys({ current: randomBytes(32), previous: old });
    expect(verifyToken("route", signed, hour, t0 + 10_000)).toEqual(token);
    // New tokens are signed with the current key.
    expect(signToken("route", token)).not.toBe(signed);
    setSessionKeys({ current: randomBytes(32) });
    expect(verifyToken("route", signed, hour, t0 + 10_000)).toBeUndefined();
  });

  test("reissue only once the stamp is a share of the idle timeout old", () => {
    const idle = { idleMs: 1_000 };
    expect(dueForReissue(token, idle, token.lastMs + 1_000 * REISSUE_SHARE - 1)).toBe(false);
    expect(dueForReissue(token, idle, token.lastMs + 1_000 * REISSUE_SHARE)).toBe(true);
    expect(dueForReissue(token, { absoluteMs: 1_000 }, token.lastMs + 900)).toBe(false);
  });
});

describe("session key files", () => {
  test("current, then previous; base64 or base64url; comments skipped", () => {
    const a = randomBytes(32);
    const b = randomBytes(32);
    const keys = parseSessionKeys(`# keys\n${a.toString("base64")}\n\n${b.toString("base64url")}\n`);
    expect(Buffer.from(keys.current)).toEqual(a);
    expect(Buffer.from(keys.previous as Uint8Array)).toEqual(b);
  });

  test("refused: empty, three keys, short keys, not base64", () => {
    const k = randomBytes(32).toString("base64");
    expect(() => parseSessionKeys("")).toThrow(/one or two keys/);
    expect(() => parseSessionKeys(`${k}\n${k}\n${k}`)).toThrow(/one or two keys/);
    expect(() => parseSessionKeys(randomBytes(8).toString("base64"))).toThrow(/at least 16 bytes/);
    expect(() => parseSessionKeys("not a key!")).toThrow(/base64/);
    expect(() => setSessionKeys({ current: new Uint8Array(4) })).toThrow(/at least 16 bytes/);
  });
});
