/**
 * ingress-nginx's annotations on the request sent upstream (src/translate/ingress/annotations/
 * upstream-request.ts). enable-access-log, service-upstream and proxy-connect-timeout need a log, a
 * Service's cluster IP and an endpoint that never answers a connect: upstream-request-live.test.ts.
 */
import { expect } from "bun:test";
import type { AnnotationCase } from "./harness.ts";

/** A case's index (so its host) is not known here: the Host the client sent is read from X-Forwarded-Host. */
export const cases: readonly AnnotationCase[] = [
  {
    name: "upstream-vhost: the backend gets that Host, the client's stays in X-Forwarded-Host",
    covers: ["upstream-vhost"],
    annotations: { "upstream-vhost": "internal.example" },
    request: { path: "/vhost" },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.headers.host).toBe("internal.example");
      expect(res.seen?.headers["x-forwarded-host"]).toMatch(/^\d+\.case\.test$/);
    },
  },
  {
    name: "upstream-vhost: $service_name and $namespace are filled in (linkerd's recipe)",
    covers: ["upstream-vhost"],
    annotations: { "upstream-vhost": "$service_name.$namespace.svc.cluster.local:8084" },
    request: { path: "/vhost-vars" },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.headers.host).toBe("scripted.cases.svc.cluster.local:8084");
    },
  },
  {
    name: "upstream-vhost with a scheme is refused: the client's Host is sent, the rest of the Ingress served",
    covers: ["upstream-vhost"],
    annotations: { "upstream-vhost": "http://internal.example" },
    request: { path: "/vhost-refused" },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.headers.host).toBe(res.seen?.headers["x-forwarded-host"]);
      expect(res.seen?.headers.host).not.toBe("internal.example");
    },
  },
  {
    name: "x-forwarded-prefix with rewrite-target: the header is sent, replacing the client's",
    covers: ["x-forwarded-prefix"],
    annotations: { "x-forwarded-prefix": "/api", "rewrite-target": "/" },
    paths: [{ path: "/api" }],
    request: { path: "/api/x", headers: { "x-forwarded-prefix": "/forged" } },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.headers["x-forwarded-prefix"]).toBe("/api");
    },
  },
  {
    name: "x-forwarded-prefix without rewrite-target: no header, as in ingress-nginx",
    covers: ["x-forwarded-prefix"],
    annotations: { "x-forwarded-prefix": "/api" },
    paths: [{ path: "/api" }],
    request: { path: "/api/x" },
    check(res) {
      expect(res.status).toBe(200);
      expect(res.seen?.headers["x-forwarded-prefix"]).toBeUndefined();
    },
  },
];
