import { describe, expect, test } from "bun:test";
import type { SessionPersistence } from "../../model/index.ts";
import { endpointToken, sameSiteNoneSafe, sessionField } from "./session-token.ts";

describe("endpoint tokens", () => {
  test("16 hex digits of xxHash64 of ip:port: fixed, so every replica and restart agrees", () => {
    expect(endpointToken("http://10.0.0.1:8080")).toBe(
      Bun.hash.xxHash64("10.0.0.1:8080").toString(16).padStart(16, "0"),
    );
    expect(endpointToken("http://10.0.0.1:8080")).toMatch(/^[0-9a-f]{16}$/);
    expect(endpointToken("http://10.0.0.1:8080")).not.toBe(endpointToken("http://10.0.0.1:8081"));
  });
});

describe("sessionField", () => {
  const cookie = (c: SessionPersistence["cookie"], https = false, ua: string | null = null) =>
    sessionField({ type: "Cookie", name: "route", ...(c ? { cookie: c } : {}) }, "abc", https, ua);

  test("a plain session cookie: Path=/ and HttpOnly, Secure on HTTPS listeners", () => {
    expect(cookie(undefined)).toEqual(["set-cookie", "route=abc; Path=/; HttpOnly"]);
    expect(cookie(undefined, true)[1]).toBe("route=abc; Path=/; Secure; HttpOnly");
    expect(cookie({ secure: false }, true)[1]).toBe("route=abc; Path=/; HttpOnly");
  });

  test("every attribute", () => {
    const [, v] = cookie({
      path: "/app",
      domain: "example.com",
      maxAgeSeconds: 60,
      sameSite: "Lax",
      secure: true,
    });
    expect(v).toBe("route=abc; Path=/app; Domain=example.com; Max-Age=60; Secure; HttpOnly; SameSite=Lax");
    const [, e] = cookie({ expiresSeconds: 3600 });
    const at = Date.parse(/Expires=([^;]+)/.exec(e)?.[1] ?? "");
    expect(Math.abs(at - (Date.now() + 3600_000))).toBeLessThan(2000);
  });

  test("conditional SameSite=None is left out for clients that reject it", () => {
    const none = { sameSite: "None" as const, conditionalSameSiteNone: true };
    const oldChrome = "Mozilla/5.0 (X11; Linux x86_64) Chrome/59.0.3071.115 Safari/537.36";
    expect(cookie(none, false, oldChrome)[1]).not.toContain("SameSite");
    expect(cookie(none, false, "Mozilla/5.0 Chrome/120.0 Safari/537.36")[1]).toContain("SameSite=None");
    expect(cookie({ sameSite: "None" }, false, oldChrome)[1]).toContain("SameSite=None");
    expect(sameSiteNoneSafe("Mozilla/5.0 (iPhone; CPU iPhone OS 12_0 like Mac OS X)")).toBe(false);
  });

  test("Header sessions hand the token out in the header itself", () => {
    expect(sessionField({ type: "Header", name: "X-Session" }, "abc", false, null)).toEqual([
      "x-session",
      "abc",
    ]);
  });
});
