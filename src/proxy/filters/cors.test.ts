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

describe("CORS in the IngressNginx style", () => {
  const nginx: CORSFilter = {
    kind: "CORS",
    allowOrigins: ["https://app.foo.com", "https://*.bar.com"],
    allowMethods: ["GET", "PUT"],
    allowHeaders: ["X-Api-Key", "Content-Type"],
    exposeHeaders: ["X-Total"],
    allowCredentials: true,
    maxAgeSeconds: 1728000,
    style: "IngressNginx",
  };
  const options = (f: CORSFilter, headers: Record<string, string>) => {
    const req = new Request("http://gw/cors", { method: "OPTIONS", headers });
    return compileCORS(f).request?.({ req, headers: req.headers } as unknown as RequestContext);
  };

  test("any OPTIONS from an allowed origin gets 204 with the whole set", () => {
    const res = options(nginx, { origin: "https://app.foo.com" });
    expect(res?.status).toBe(204);
    expect(Object.fromEntries(res?.headers ?? [])).toEqual({
      "access-control-allow-origin": "https://app.foo.com",
      "access-control-allow-credentials": "true",
      "access-control-allow-methods": "GET, PUT",
      "access-control-allow-headers": "X-Api-Key, Content-Type",
      "access-control-expose-headers": "X-Total",
      "access-control-max-age": "1728000",
      vary: "Origin",
    });
  });

  test("a * in a pattern is one host label", () => {
    expect(options(nginx, { origin: "https://a.bar.com" })?.headers.get("access-control-allow-origin")).toBe(
      "https://a.bar.com",
    );
    const deeper = options(nginx, { origin: "https://a.b.bar.com", "access-control-request-method": "GET" });
    expect(deeper?.status).toBe(204);
    expect(deeper?.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("a foreign preflight is answered bare; a foreign plain OPTIONS goes on", () => {
    const pre = options(nginx, { origin: "https://evil.com", "access-control-request-method": "GET" });
    expect(pre?.status).toBe(204);
    expect([...(pre?.headers.keys() ?? [])]).toEqual([]);
    expect(options(nginx, { origin: "https://evil.com" })).toBeUndefined();
    expect(options(nginx, {})).toBeUndefined();
  });

  test("* stays literal with credentials, and answers requests without Origin", () => {
    const open = { ...nginx, allowOrigins: ["*"] };
    const res = options(open, {});
    expect(res?.status).toBe(204);
    expect(res?.headers.get("access-control-allow-origin")).toBe("*");
    expect(res?.headers.get("access-control-allow-credentials")).toBe("true");
    expect(res?.headers.get("vary")).toBeNull();
    const h = new Headers();
    compileCORS(open).response?.(new Request("http://gw/", { headers: { origin: "https://x.com" } }), h);
    expect(h.get("access-control-allow-origin")).toBe("*");
    const bare = new Headers();
    compileCORS(open).response?.(new Request("http://gw/"), bare);
    expect(bare.get("access-control-allow-origin")).toBe("*");
  });

  test("responses to allowed origins carry the methods, headers and max-age too", () => {
    const f = compileCORS(nginx);
    const h = new Headers();
    f.response?.(new Request("http://gw/", { headers: { origin: "https://app.foo.com" } }), h);
    expect(h.get("access-control-allow-methods")).toBe("GET, PUT");
    expect(h.get("access-control-allow-headers")).toBe("X-Api-Key, Content-Type");
    expect(h.get("access-control-max-age")).toBe("1728000");
    const other = new Headers();
    f.response?.(new Request("http://gw/", { headers: { origin: "https://evil.com" } }), other);
    f.response?.(new Request("http://gw/"), other);
    expect([...other.keys()]).toEqual([]);
    expect(f.request?.({ req: new Request("http://gw/") } as unknown as RequestContext)).toBeUndefined();
  });
});
