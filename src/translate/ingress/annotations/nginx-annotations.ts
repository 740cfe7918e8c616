/**
 * Every ingress-nginx annotation, and what Gatehouse does with it: the one table the audit (audit.ts),
 * the docs table (docs/ingress.md, generated from this by scripts/annotation-table.ts) and the tests read.
 * The list is ingress-nginx's documented annotations (130, user-guide/nginx-configuration/annotations.md),
 * those its annotation parsers read that the page leaves out, and a few it removed that old Ingresses
 * still carry.
 * - honoured: Gatehouse does what ingress-nginx does (the note says where it differs in detail);
 * - refused: never honoured, by design (configuration text never becomes code here);
 * - not-yet: not honoured today; the note says what differs from ingress-nginx.
 * A `guard` is an access control: an Ingress that asks for one Gatehouse does not enforce fails closed.
 * `off` lists values that ask for nothing (compared trimmed, lower-case): such an Ingress loses nothing.
 */

export const NGINX_PREFIX = "nginx.ingress.kubernetes.io/";

export type AnnotationSupport = "honoured" | "refused" | "not-yet";

export interface AnnotationEntry {
  readonly support: AnnotationSupport;
  /** What Gatehouse does (honoured), or what differs from ingress-nginx (refused, not-yet). */
  readonly note: string;
  /** An access control: not enforced means the Ingress's paths answer 403 (audit.ts). */
  readonly guard?: true;
  /** Values that ask for nothing, lower-case. */
  readonly off?: readonly string[];
}

const honoured = (note: string): AnnotationEntry => ({ support: "honoured", note });
const refused = (note: string, guard?: true): AnnotationEntry => ({
  support: "refused",
  note,
  ...(guard ? { guard } : {}),
});
const notYet = (note: string, off?: readonly string[]): AnnotationEntry => ({
  support: "not-yet",
  note,
  ...(off ? { off } : {}),
});
const guard = (note: string, off?: readonly string[]): AnnotationEntry => ({
  support: "not-yet",
  note,
  guard: true,
  ...(off ? { off } : {}),
});

const snippet = "nginx configuration text is never run (configuration never becomes code in Gatehouse)";
const affinity = "no session affinity: every request is balanced round-robin over the endpoints";
const basicAuth = "basic/digest authentication is not enforced (an AuthPolicy can require a JWT instead)";
const externalAuth = "external authentication (auth-url) is not enforced";
const clientCert = "client certificates are not requested or verified";
const canary =
  "not served as a canary of another Ingress: its paths are ordinary paths that clash with the main Ingress's (oldest wins)";
const cors = "no CORS headers and no preflight answers (an HTTPRoute CORS filter does this)";
const buffering = "bodies are streamed; nginx buffering settings are not read";
const timeouts = "the default upstream timeout applies (--upstream-timeout-ms), not this one";
const nextUpstream = "a failed request is not retried on another endpoint as this asks";
const redirect = "requests are proxied to the backend instead of redirected";
const proxySSL = "the backend is spoken to in plain HTTP: no TLS, client certificate or verification";
const tracing = "no tracing is set per Ingress";
const hashing = "no consistent hashing: endpoints are chosen round-robin";
const waf = "no web application firewall inspects these requests";
const removed = (what: string) => `removed from ingress-nginx; ${what}`;

export const NGINX_ANNOTATIONS: Readonly<Record<string, AnnotationEntry>> = {
  affinity: notYet(affinity),
  "affinity-canary-behavior": notYet(affinity),
  "affinity-mode": notYet(affinity),
  "allowlist-source-range": guard("the client address is not checked against these ranges", [""]),
  "app-root": notYet("requests for / are not redirected to the application root"),
  "auth-always-set-cookie": guard(externalAuth),
  "auth-cache-duration": guard(externalAuth),
  "auth-cache-key": guard(externalAuth),
  "auth-keepalive": guard(externalAuth),
  "auth-keepalive-requests": guard(externalAuth),
  "auth-keepalive-share-vars": guard(externalAuth),
  "auth-keepalive-timeout": guard(externalAuth),
  "auth-method": guard(externalAuth),
  "auth-proxy-set-headers": guard(externalAuth),
  "auth-realm": guard(basicAuth),
  "auth-request-redirect": guard(externalAuth),
  "auth-response-headers": guard(externalAuth),
  "auth-secret": guard(basicAuth),
  "auth-secret-type": guard(basicAuth),
  "auth-signin": guard(externalAuth),
  "auth-signin-redirect-param": guard(externalAuth),
  "auth-snippet": refused(snippet, true),
  "auth-tls-error-page": guard(clientCert),
  "auth-tls-match-cn": guard(clientCert),
  "auth-tls-pass-certificate-to-upstream": guard(clientCert, ["false"]),
  "auth-tls-secret": guard(clientCert),
  "auth-tls-verify-client": guard(clientCert, ["off"]),
  "auth-tls-verify-depth": guard(clientCert),
  "auth-type": guard(basicAuth),
  "auth-url": guard(externalAuth),
  "backend-protocol": notYet(
    "the backend is spoken to in HTTP/1.1 (a Service port's appProtocol selects h2c or WebSocket); HTTPS, GRPC, GRPCS, FCGI and AJP backends are not supported",
    ["http"],
  ),
  canary: notYet(canary, ["false"]),
  "canary-by-cookie": notYet(canary),
  "canary-by-header": notYet(canary),
  "canary-by-header-pattern": notYet(canary),
  "canary-by-header-value": notYet(canary),
  "canary-weight": notYet(canary),
  "canary-weight-total": notYet(canary),
  "client-body-buffer-size": notYet(buffering),
  "configuration-snippet": refused(snippet),
  "connection-proxy-header": notYet("the upstream Connection header is not set from this"),
  "cors-allow-credentials": notYet(cors),
  "cors-allow-headers": notYet(cors),
  "cors-allow-methods": notYet(cors),
  "cors-allow-origin": notYet(cors),
  "cors-expose-headers": notYet(cors),
  "cors-max-age": notYet(cors),
  "custom-headers": notYet("the named ConfigMap's headers are not added"),
  "custom-http-errors": notYet(
    "upstream error responses are passed on, not replaced by the default backend's",
  ),
  "default-backend": notYet("requests no rule serves are not sent to this Service"),
  "denylist-source-range": guard("the client address is not checked against these ranges", [""]),
  "disable-proxy-intercept-errors": notYet("not read (Gatehouse never intercepts upstream errors)"),
  "enable-access-log": notYet("access logging is set per process (--access-log-sample), not per Ingress"),
  "enable-cors": notYet(cors, ["false"]),
  "enable-global-auth": notYet("not read: Gatehouse has no global external authentication"),
  "enable-influxdb": notYet(removed("no InfluxDB metrics are sent"), ["false"]),
  "enable-modsecurity": guard(waf, ["false"]),
  "enable-opentelemetry": notYet(tracing, ["false"]),
  "enable-opentracing": notYet(removed(tracing), ["false"]),
  "enable-owasp-core-rules": guard(waf, ["false"]),
  "enable-rewrite-log": notYet("no rewrite log is written", ["false"]),
  "fastcgi-index": notYet("FastCGI backends are not supported"),
  "fastcgi-params-configmap": notYet("FastCGI backends are not supported"),
  "force-ssl-redirect": honoured("308 to https even for hosts without a certificate of their own"),
  "from-to-www-redirect": notYet("no redirect between www.<host> and <host>", ["false"]),
  "global-rate-limit": notYet(removed("no global rate limit is applied (a RateLimitPolicy does this)")),
  "global-rate-limit-ignored-cidrs": notYet(removed("no global rate limit is applied")),
  "global-rate-limit-key": notYet(removed("no global rate limit is applied")),
  "global-rate-limit-window": notYet(removed("no global rate limit is applied")),
  "http2-push-preload": notYet("no HTTP/2 server push", ["false"]),
  "influxdb-host": notYet(removed("no InfluxDB metrics are sent")),
  "influxdb-measurement": notYet(removed("no InfluxDB metrics are sent")),
  "influxdb-port": notYet(removed("no InfluxDB metrics are sent")),
  "influxdb-server-name": notYet(removed("no InfluxDB metrics are sent")),
  "limit-allowlist": honoured(
    "clients in these ranges are never rate limited (the newer name of limit-whitelist)",
  ),
  "limit-burst-multiplier": honoured("each limit's burst is the limit times this (default 5)"),
  "limit-connections": guard("concurrent connections per client address are not limited", ["0"]),
  "limit-rate": notYet("response bandwidth is not limited"),
  "limit-rate-after": notYet("response bandwidth is not limited"),
  "limit-rpm": honoured("N requests per minute per client address, shared by every replica through Redis"),
  "limit-rps": honoured("N requests per second per client address, shared by every replica through Redis"),
  "limit-whitelist": honoured("clients in these ranges are never rate limited"),
  "load-balance": notYet("endpoints are chosen round-robin whatever this says", ["round_robin"]),
  "mirror-host": notYet("requests are not mirrored (an HTTPRoute RequestMirror filter does this)"),
  "mirror-request-body": notYet("requests are not mirrored (an HTTPRoute RequestMirror filter does this)"),
  "mirror-target": notYet("requests are not mirrored (an HTTPRoute RequestMirror filter does this)"),
  "modsecurity-snippet": refused(snippet, true),
  "modsecurity-transaction-id": guard(waf),
  "opentelemetry-operation-name": notYet(tracing),
  "opentelemetry-trust-incoming-span": notYet(tracing),
  "opentracing-trust-incoming-span": notYet(removed(tracing)),
  "permanent-redirect": notYet(redirect),
  "permanent-redirect-code": notYet(redirect),
  "preserve-trailing-slash": notYet("not read: the https redirect keeps the path as the client sent it"),
  "proxy-body-size": notYet("request bodies are not limited to this size"),
  "proxy-buffer-size": notYet(buffering),
  "proxy-buffering": notYet(buffering, ["off"]),
  "proxy-buffers-number": notYet(buffering),
  "proxy-busy-buffers-size": notYet(buffering),
  "proxy-connect-timeout": notYet(timeouts),
  "proxy-cookie-domain": notYet("Set-Cookie domains are passed on unrewritten"),
  "proxy-cookie-path": notYet("Set-Cookie paths are passed on unrewritten"),
  "proxy-http-version": notYet("the backend is always spoken to in HTTP/1.1", ["1.1"]),
  "proxy-max-temp-file-size": notYet(buffering),
  "proxy-next-upstream": notYet(nextUpstream),
  "proxy-next-upstream-timeout": notYet(nextUpstream),
  "proxy-next-upstream-tries": notYet(nextUpstream),
  "proxy-read-timeout": notYet(timeouts),
  "proxy-redirect-from": notYet("Location headers are passed on unrewritten"),
  "proxy-redirect-to": notYet("Location headers are passed on unrewritten"),
  "proxy-request-buffering": notYet(buffering, ["off"]),
  "proxy-send-timeout": notYet(timeouts),
  "proxy-ssl-ciphers": notYet(proxySSL),
  "proxy-ssl-name": notYet(proxySSL),
  "proxy-ssl-protocols": notYet(proxySSL),
  "proxy-ssl-secret": notYet(proxySSL),
  "proxy-ssl-server-name": notYet(proxySSL, ["off"]),
  "proxy-ssl-verify": notYet(proxySSL, ["off"]),
  "proxy-ssl-verify-depth": notYet(proxySSL),
  "relative-redirects": notYet("redirect Locations are absolute", ["false"]),
  "rewrite-target": notYet(
    "the backend receives the path unrewritten (an HTTPRoute URLRewrite filter does this)",
  ),
  satisfy: guard("access controls are not combined as this asks", ["all"]),
  "server-alias": notYet("these extra host names are not served"),
  "server-snippet": refused(snippet),
  "service-upstream": notYet("requests go straight to pod endpoints, not to the Service's cluster IP", [
    "false",
  ]),
  "session-cookie-change-on-failure": notYet(affinity),
  "session-cookie-conditional-samesite-none": notYet(affinity),
  "session-cookie-domain": notYet(affinity),
  "session-cookie-expires": notYet(affinity),
  "session-cookie-max-age": notYet(affinity),
  "session-cookie-name": notYet(affinity),
  "session-cookie-path": notYet(affinity),
  "session-cookie-samesite": notYet(affinity),
  "session-cookie-secure": notYet(affinity),
  "ssl-ciphers": notYet("Gatehouse's own TLS settings apply (docs/tls.md)"),
  "ssl-passthrough": notYet("TLS is terminated, not passed through (a TLSRoute passes it through)", [
    "false",
  ]),
  "ssl-prefer-server-ciphers": notYet("Gatehouse's own TLS settings apply (docs/tls.md)"),
  "ssl-redirect": honoured("308 to https for hosts with a certificate of their own (docs/tls.md)"),
  "stream-snippet": refused(snippet),
  "temporal-redirect": notYet(redirect),
  "temporal-redirect-code": notYet(redirect),
  "upstream-hash-by": notYet(hashing),
  "upstream-hash-by-subset": notYet(hashing),
  "upstream-hash-by-subset-size": notYet(hashing),
  "upstream-vhost": notYet("the backend receives the client's Host header"),
  "use-port-in-redirects": notYet(
    "not read: redirect Locations name the port only when it is not the default",
    ["false"],
  ),
  "use-regex": notYet("paths are matched as prefixes, never as regular expressions", ["false"]),
  "whitelist-source-range": guard("the client address is not checked against these ranges", [""]),
  "x-forwarded-prefix": notYet("no X-Forwarded-Prefix header is sent"),
};

/** Gatehouse's own Ingress annotations (`gatehouse.dev/…`); any other key under that prefix is unknown. */
export const GATEHOUSE_PREFIX = "gatehouse.dev/";

export const GATEHOUSE_ANNOTATIONS: Readonly<Record<string, AnnotationEntry>> = {
  "auth-policy": honoured("the named AuthPolicy of the Ingress's namespace guards its paths (docs/auth.md)"),
};
