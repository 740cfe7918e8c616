import { describe, expect, test } from "bun:test";
import type { CORSFilter } from "../../model/index.ts";
import { compileCORS } from "./cors.ts";
import type { RequestContext } from "./filter-types.ts";

const policy: CORSFilter = {
  kind: "CORS",
  allowOrigins: ["https://www.foo.com", "https://*.bar.com"],
  allowMethods: ["GET", "OPTIONS"],
  allowHeaders: ["x-header-1", "x-header-2"],
  exposeHeaders: ["x-header-3"],
  allowCredentials: true,
  maxAgeSeconds: 3600,
};

function preflight(f: CORSFilter, origin: string, extra: Record<string, string> = {}): Response | undefined {
  const req = new Request("http://gw/cors", {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "GET", ...extra },
  });
  const ctx = { req, headers: req.headers } as unknown as RequestContext;
  return compileCORS(f).request?.(ctx);
}

describe("CORS preflight", () => {
  test("an allowed origin gets the policy, echoed because of credentials", () => {
    const res = preflight(policy, "https://a.b.bar.com");
    expect(res?.status).toBe(204);
    const h = res?.headers;
    expect(h?.get("access-control-allow-origin")).toBe("https://a.b.bar.com");
    expect(h?.get("access-control-allow-methods")).toBe("GET, OPTIONS");
    expect(h?.get("access-control-allow-headers")).toBe("x-header-1, x-header-2");
    expect(h?.get("access-control-allow-credentials")).toBe("true");
    expect(h?.get("access-control-max-age")).toBe("3600");
    expect(h?.get("vary")).toBe("Origin");
  });

  test("a foreign origin is answered without CORS headers", () => {
    for (const o of [
      "https://foobar.com",
      "https://bar.com",
      "https://x.bar.com.evil.com",
      "https://a/b.bar.com",
    ]) {
      const res = preflight(policy, o);
      expect(res?.status).toBe(204);
      expect(res?.headers.get("access-control-allow-origin")).toBeNull();
    }
  });

  test("wildcards: literal * without credentials, echoes with them", () => {
    const open = { ...policy, allowOrigins: ["*"], allowMethods: ["*"], allowHeaders: ["*"] };
    const withCreds = preflight(open, "https://x.com", { "access-control-request-headers": "x-a" });
    expect(withCreds?.headers.get("access-control-allow-origin")).toBe("https://x.com");
    expect(withCreds?.headers.get("access-control-allow-methods")).toBe("GET");
    expect(withCreds?.headers.get("access-control-allow-headers")).toBe("x-a");
    const anon = preflight({ ...open, allowCredentials: false }, "https://x.com");
    expect(anon?.headers.get("access-control-allow-origin")).toBe("*");
    expect(anon?.headers.get("access-control-allow-methods")).toBe("*");
    expect(anon?.headers.get("access-control-allow-credentials")).toBeNull();
  });

  test("a plain OPTIONS is not a preflight", () => {
    const req = new Request("http://gw/cors", {
      method: "OPTIONS",
      headers: { origin: "https://www.foo.com" },
    });
    expect(
      compileCORS(policy).request?.({ req, headers: req.headers } as unknown as RequestContext),
    ).toBeUndefined();
  });
});

describe("CORS on responses", () => {
  test("decorates responses to allowed origins only", () => {
    const f = compileCORS(policy);
    const h = new Headers({ vary: "Accept-Encoding" });
    f.response?.(new Request("http://gw/", { headers: { origin: "https://www.foo.com" } }), h);
    expect(h.get("access-control-allow-origin")).toBe("https://www.foo.com");
    expect(h.get("access-control-expose-headers")).toBe("x-header-3");
    expect(h.get("vary")).toBe("Accept-Encoding, Origin");
    const other = new Headers();
    f.response?.(new Request("http://gw/", { headers: { origin: "https://evil.com" } }), other);
    expect([...other.keys()]).toEqual([]);
  });
});
