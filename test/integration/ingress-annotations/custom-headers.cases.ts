/**
 * ingress-nginx's custom-headers (src/translate/ingress/annotations/custom-headers.ts): the named
 * ConfigMap's entries set on the response, each only if --global-allowed-response-headers lists it.
 */
import { expect } from "bun:test";
import type { AnnotationCase } from "./harness.ts";

/** The allowed names, for the gateway all cases share (ingress-nginx's global-allowed-response-headers). */
export const gatewayFlags: readonly string[] = [
  "--global-allowed-response-headers",
  "X-Frame-Options, Content-Security-Policy,X-Dollar,X-Backend-Says",
];

const configMap = (name: string, data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: ${name}, namespace: cases }\ndata: ${JSON.stringify(data)}\n`;

export const cases: readonly AnnotationCase[] = [
  {
    name: "custom-headers: the ConfigMap's entries are set on the backend's response, $ sent as written",
    covers: ["custom-headers"],
    annotations: { "custom-headers": "cases/ch-basic" },
    manifests: configMap("ch-basic", {
      "X-Frame-Options": "DENY",
      "Content-Security-Policy": "default-src 'self'",
      "X-Dollar": "$remote_addr",
    }),
    request: { path: "/page" },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.path).toBe("/page");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("content-security-policy")).toBe("default-src 'self'");
      expect(res.headers.get("x-dollar")).toBe("$remote_addr");
    },
  },
  {
    name: "custom-headers: an entry replaces the backend's header of that name (more_set_headers), others kept",
    covers: ["custom-headers"],
    annotations: { "custom-headers": "cases/ch-replace" },
    manifests: configMap("ch-replace", { "X-Backend-Says": "gateway" }),
    request: { path: "/respond-headers?X-Backend-Says=upstream&X-Untouched=1" },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.headers.get("x-backend-says")).toBe("gateway");
      expect(res.headers.get("x-untouched")).toBe("1");
    },
  },
  {
    name: "custom-headers: an entry the flag does not list is not set, the allowed one is",
    covers: ["custom-headers"],
    annotations: { "custom-headers": "cases/ch-partial" },
    manifests: configMap("ch-partial", { "X-Not-Listed": "1", "X-Frame-Options": "SAMEORIGIN" }),
    request: { path: "/" },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.headers.get("x-frame-options")).toBe("SAMEORIGIN");
      expect(res.headers.has("x-not-listed")).toBe(false);
    },
  },
  {
    name: "custom-headers: a missing ConfigMap leaves the paths served without headers (ingress-nginx: 503)",
    covers: ["custom-headers"],
    annotations: { "custom-headers": "cases/ch-does-not-exist" },
    request: { path: "/" },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.path).toBe("/");
      expect(res.headers.has("x-frame-options")).toBe(false);
    },
  },
  {
    name: "custom-headers: the gateway's own answers carry them too (a permanent-redirect's 301)",
    covers: ["custom-headers"],
    annotations: {
      "custom-headers": "cases/ch-redirect",
      "permanent-redirect": "https://elsewhere.example/",
    },
    manifests: configMap("ch-redirect", { "X-Frame-Options": "DENY" }),
    request: { path: "/old" },
    check(res) {
      expect(res.status).toBe(301);
      expect(res.headers.get("location")).toBe("https://elsewhere.example/");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
    },
  },
];
