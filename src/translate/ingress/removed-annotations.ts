/**
 * Annotations ingress-nginx removed that old Ingresses still carry, part of the one table
 * (nginx-annotations.ts `NGINX_ANNOTATIONS`): what Gatehouse does with each.
 */
import { type AnnotationEntry, honoured, notYet } from "./annotation-entry.ts";

const removed = (what: string) => `removed from ingress-nginx; ${what}`;
const removedIn112 = (what: string) => `removed from ingress-nginx in v1.12.0; ${what}`;
const noInflux =
  "no InfluxDB metrics are sent, and none are planned: Prometheus metrics on the admin port carry the same per-route figures";
const noOpenTracing =
  "not planned: OpenTracing is retired; OpenTelemetry tracing is Gatehouse's (the enable-opentelemetry entries)";

export const REMOVED_ANNOTATIONS: Readonly<Record<string, AnnotationEntry>> = {
  "enable-influxdb": notYet(removed(noInflux), ["false"]),
  "enable-opentracing": notYet(removed(noOpenTracing), ["false"]),
  "global-rate-limit": honoured(
    removedIn112(
      "N requests per global-rate-limit-window for the whole Ingress, counted once for every replica through Redis (ingress-nginx: memcached), by GCRA with a burst of N rather than ingress-nginx's sliding window (docs/ratelimit.md); refused requests answer 429 (ingress-nginx's default) with Retry-After and RateLimit headers; while Redis is down each replica limits at its share, where ingress-nginx let every request through; 0 or an unusable value fails the Ingress's routes closed (500), where ingress-nginx applied no limit",
    ),
  ),
  "global-rate-limit-ignored-cidrs": honoured(
    removedIn112(
      "clients in these ranges are neither counted nor limited by the global limit (limit-rps and limit-rpm still apply to them, as in ingress-nginx)",
    ),
  ),
  "global-rate-limit-key": honoured(
    removedIn112(
      "the nginx variables $remote_addr (the socket peer), $http_x_api_client (the header X-Api-Client), $uri and $request_method, alone or combined (default $remote_addr); any other variable fails the Ingress's routes closed (500); a header the request lacks counts as the client address (ingress-nginx used the client address only when the whole key came out empty)",
    ),
  ),
  "global-rate-limit-window": honoured(
    removedIn112(
      "a Go duration (10s, 1m, 1h30m), in whole seconds as ingress-nginx truncated it; missing, or under 1s, fails the Ingress's routes closed (500), where ingress-nginx applied no limit",
    ),
  ),
  "influxdb-host": notYet(removed(noInflux)),
  "influxdb-measurement": notYet(removed(noInflux)),
  "influxdb-port": notYet(removed(noInflux)),
  "influxdb-server-name": notYet(removed(noInflux)),
  "opentracing-trust-incoming-span": notYet(removed(noOpenTracing)),
};
