/** ingress-nginx's CORS annotations (src/translate/ingress/annotations/cors.ts). */
import { expect } from "bun:test";
import type { AnnotationCase, CaseResponse } from "./harness.ts";

const DEFAULT_METHODS = "GET, PUT, POST, DELETE, PATCH, OPTIONS";
const DEFAULT_HEADERS =
  "DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, Cache-Control, Content-Type, Range, Authorization";

const preflight = (origin: string, method = "PUT") => ({
  path: "/api",
  method: "OPTIONS",
  headers: { origin, "access-control-request-method": method },
});
const get = (origin: string) => ({ path: "/api", headers: { origin } });

/** The CORS headers of a response, by lower-case name. */
function cors(res: CaseResponse): Record<string, string> {
  return Object.fromEntries([...res.headers].filter(([name]) => name.startsWith("access-control-")));
}

export const cases: readonly AnnotationCase[] = [
  {
    name: "enable-cors: a preflight is answered 204 with ingress-nginx's defaults, the backend not reached",
    covers: ["enable-cors"],
    annotations: { "enable-cors": "true" },
    request: preflight("https://app.example.com"),
    check(res) {
      expect(res.status).toBe(204);
      expect(res.seen).toBeUndefined();
      expect(cors(res)).toEqual({
        "access-control-allow-origin": "*",
        "access-control-allow-credentials": "true",
        "access-control-allow-methods": DEFAULT_METHODS,
        "access-control-allow-headers": DEFAULT_HEADERS,
        "access-control-max-age": "1728000",
      });
    },
  },
  {
    name: "enable-cors: a GET with an Origin reaches the backend and its response carries the CORS headers",
    covers: ["enable-cors"],
    annotations: { "enable-cors": "true" },
    request: get("https://app.example.com"),
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.method).toBe("GET");
      expect(cors(res)).toEqual({
        "access-control-allow-origin": "*",
        "access-control-allow-credentials": "true",
        "access-control-allow-methods": DEFAULT_METHODS,
        "access-control-allow-headers": DEFAULT_HEADERS,
        "access-control-max-age": "1728000",
      });
    },
  },
  {
    name: "enable-cors with the origin *: any OPTIONS is answered 204, Origin or not",
    covers: ["enable-cors", "cors-allow-origin"],
    annotations: { "enable-cors": "true", "cors-allow-origin": "*" },
    request: { path: "/api", method: "OPTIONS" },
    check(res) {
      expect(res.status).toBe(204);
      expect(res.seen).toBeUndefined();
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
    },
  },
  {
    name: "cors-* without enable-cors: nothing, the OPTIONS reaches the backend",
    covers: ["enable-cors", "cors-allow-origin", "cors-max-age"],
    annotations: { "cors-allow-origin": "https://app.example.com", "cors-max-age": "60" },
    request: preflight("https://app.example.com"),
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.method).toBe("OPTIONS");
      expect(cors(res)).toEqual({});
    },
  },
  {
    name: "cors-allow-origin: a preflight from a listed origin gets it echoed, with Vary: Origin",
    covers: ["cors-allow-origin"],
    annotations: { "enable-cors": "true", "cors-allow-origin": "https://app.example.com, https://b.example" },
    request: preflight("https://app.example.com"),
    check(res) {
      expect(res.status).toBe(204);
      expect(res.seen).toBeUndefined();
      expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
      expect(res.headers.get("access-control-allow-methods")).toBe(DEFAULT_METHODS);
      expect(res.headers.get("vary")).toBe("Origin");
    },
  },
  {
    name: "cors-allow-origin: a preflight from another origin is answered 204 without CORS headers",
    covers: ["cors-allow-origin"],
    annotations: { "enable-cors": "true", "cors-allow-origin": "https://app.example.com" },
    request: preflight("https://evil.example"),
    check(res) {
      expect(res.status).toBe(204);
      expect(res.seen).toBeUndefined();
      expect(cors(res)).toEqual({});
    },
  },
  {
    name: "cors-allow-origin: a GET from another origin is served without CORS headers",
    covers: ["cors-allow-origin"],
    annotations: { "enable-cors": "true", "cors-allow-origin": "https://app.example.com" },
    request: get("https://evil.example"),
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.method).toBe("GET");
      expect(cors(res)).toEqual({});
    },
  },
  {
    name: "cors-allow-origin: https://*.shop.example admits one label in place of *",
    covers: ["cors-allow-origin"],
    annotations: { "enable-cors": "true", "cors-allow-origin": "https://*.shop.example:8443" },
    request: get("https://eu.shop.example:8443"),
    check(res) {
      expect(res.seen?.method).toBe("GET");
      expect(res.headers.get("access-control-allow-origin")).toBe("https://eu.shop.example:8443");
    },
  },
  {
    name: "cors-allow-origin: https://*.shop.example does not admit two labels (as ingress-nginx)",
    covers: ["cors-allow-origin"],
    annotations: { "enable-cors": "true", "cors-allow-origin": "https://*.shop.example:8443" },
    request: preflight("https://a.eu.shop.example:8443"),
    check(res) {
      expect(res.status).toBe(204);
      expect(cors(res)).toEqual({});
    },
  },
  {
    name: "cors-allow-origin: a bad entry is left out, the others still allowed",
    covers: ["cors-allow-origin"],
    annotations: {
      "enable-cors": "true",
      "cors-allow-origin": "https://app.example.com/, https://b.example",
    },
    request: get("https://b.example"),
    check(res) {
      expect(res.headers.get("access-control-allow-origin")).toBe("https://b.example");
    },
  },
  {
    name: "cors-allow-credentials: true with a listed origin echoes it and allows credentials",
    covers: ["cors-allow-credentials", "cors-allow-origin"],
    annotations: {
      "enable-cors": "true",
      "cors-allow-origin": "https://app.example.com",
      "cors-allow-credentials": "true",
    },
    request: get("https://app.example.com"),
    check(res) {
      expect(res.seen?.method).toBe("GET");
      expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
      expect(res.headers.get("access-control-allow-credentials")).toBe("true");
    },
  },
  {
    name: "cors-allow-credentials: false sends no Access-Control-Allow-Credentials",
    covers: ["cors-allow-credentials"],
    annotations: { "enable-cors": "true", "cors-allow-credentials": "false" },
    request: preflight("https://app.example.com"),
    check(res) {
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    },
  },
  {
    name: "cors-allow-methods, cors-allow-headers and cors-max-age are what a preflight answers",
    covers: ["cors-allow-methods", "cors-allow-headers", "cors-max-age"],
    annotations: {
      "enable-cors": "true",
      "cors-allow-methods": "GET,POST, DELETE",
      "cors-allow-headers": "X-Api-Key, Content-Type",
      "cors-max-age": "600",
    },
    request: {
      ...preflight("https://app.example.com", "DELETE"),
      headers: {
        origin: "https://app.example.com",
        "access-control-request-method": "DELETE",
        "access-control-request-headers": "x-api-key",
      },
    },
    check(res) {
      expect(res.status).toBe(204);
      expect(res.seen).toBeUndefined();
      expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST, DELETE");
      expect(res.headers.get("access-control-allow-headers")).toBe("X-Api-Key, Content-Type");
      expect(res.headers.get("access-control-max-age")).toBe("600");
    },
  },
  {
    name: "cors-max-age and cors-allow-methods refused: the defaults apply and the rest is served",
    covers: ["cors-max-age", "cors-allow-methods"],
    annotations: {
      "enable-cors": "true",
      "cors-max-age": "abc",
      "cors-allow-methods": "GET, PO ST",
      "cors-allow-headers": "X-Api-Key",
    },
    request: preflight("https://app.example.com"),
    check(res) {
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-max-age")).toBe("1728000");
      expect(res.headers.get("access-control-allow-methods")).toBe(DEFAULT_METHODS);
      expect(res.headers.get("access-control-allow-headers")).toBe("X-Api-Key");
    },
  },
  {
    name: "cors-expose-headers: a response lists them in Access-Control-Expose-Headers",
    covers: ["cors-expose-headers"],
    annotations: { "enable-cors": "true", "cors-expose-headers": "X-Total-Count, X-Request-Id" },
    request: get("https://app.example.com"),
    check(res) {
      expect(res.seen?.method).toBe("GET");
      expect(res.headers.get("access-control-expose-headers")).toBe("X-Total-Count, X-Request-Id");
    },
  },
];
