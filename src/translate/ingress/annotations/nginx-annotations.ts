/**
 * Every ingress-nginx annotation, and what Gatehouse does with it: the one table the audit (audit.ts),
 * the docs table (docs/ingress.md, generated from this by scripts/annotation-table.ts) and the tests read.
 * The list is ingress-nginx's documented annotations (130, user-guide/nginx-configuration/annotations.md),
 * those its annotation parsers read that the page leaves out, and a few it removed that old Ingresses
 * still carry.
 * - honoured: Gatehouse does what ingress-nginx does (the note says where it differs in detail);
 * - refused: never honoured, by design (configuration text never becomes code here);
 * - not-yet: not honoured today; the note says what differs from ingress-nginx;
 * - no-effect: an nginx tuning knob with no meaning outside nginx (buffer sizes, its HTTP version to
 *   backends, its debug logs): accepted, reported at info level, counted apart from the honoured ones.
 * A `guard` is an access control: an Ingress that asks for one Gatehouse does not enforce fails closed.
 * `off` lists values that ask for nothing (compared trimmed, lower-case): such an Ingress loses nothing.
 */

// Built where the Kubernetes source reads the annotations that name other objects.
export { NGINX_PREFIX } from "../../../sources/nginx-references.ts";

import {
  type AnnotationEntry,
  guard,
  honoured,
  honouredGuard,
  notYet,
  refused,
  tuning,
} from "../annotation-entry.ts";

import { REMOVED_ANNOTATIONS } from "../removed-annotations.ts";

export type { AnnotationEntry, AnnotationSupport } from "../annotation-entry.ts";

const snippet = "nginx configuration text is never run (configuration never becomes code in Gatehouse)";
const sticky = (what: string) => honoured(`session affinity (docs/load-balancing.md): ${what}`);
const externalAuth = "not sent to the auth service: Gatehouse sets no extra headers on the auth sub-request";
const buffering =
  "nginx's buffers have no counterpart: bodies stream with backpressure, request bodies up to --request-buffer-bytes are read whole first (docs/http.md)";
const proxySSL = (what: string) =>
  honoured(
    `with backend-protocol HTTPS, GRPCS or AUTO_HTTP (else reported, not applied): ${what}; read without a proxy-ssl-secret and for GRPCS too, where ingress-nginx ignores it (docs/ingress.md)`,
  );
const tracing = "no tracing is set per Ingress";
const subsets = (what: string) => honoured(`with upstream-hash-by: ${what} (docs/load-balancing.md)`);

export const NGINX_ANNOTATIONS: Readonly<Record<string, AnnotationEntry>> = {
  ...REMOVED_ANNOTATIONS,
  affinity: sticky(`"cookie": a cookie naming the endpoint, looked up among the route's own endpoints`),
  "affinity-canary-behavior": notYet("sticky only: a cookie pins canary clients too", ["sticky"]),
  "affinity-mode": sticky("balanced pins like persistent: scaling up moves no pinned client"),
  "allowlist-source-range": honouredGuard(
    "only these client addresses (IPv4/IPv6 CIDRs or addresses, comma-separated) are served; others get 403 problem+json; wins over whitelist-source-range; a list that does not parse refuses every client (never open)",
    [""],
  ),
  "app-root": honoured(
    "a request for exactly / on each of the Ingress's hosts answers 302 to this path on the same host, ahead of every path of the host (the query is not kept, as nginx's return)",
  ),
  "auth-always-set-cookie": honoured(
    "the service's Set-Cookie reaches the client on refusals too (default: on admitted answers and the sign-in redirect only, as nginx's add_header without `always`); not a boolean: reported, false",
  ),
  "auth-cache-duration": honoured(
    "nginx proxy_cache_valid lines, comma-separated (`200 202 401 5m`, the default; a line without statuses keeps 200/301/302); times in s, m, h, d; another form is reported and the default used",
  ),
  "auth-cache-key": honoured(
    "answers of the auth service are kept per key (a template: $http_<name>, $cookie_<name>, $remote_addr, $request_method, $host, $request_uri …) for auth-cache-duration, in each gateway process (at most 10,000 keys); a key that does not parse is reported and nothing is kept",
  ),
  "auth-keepalive": tuning(
    "connections to the auth service are kept alive by Gatehouse's HTTP client whatever this says",
  ),
  "auth-keepalive-requests": tuning(
    "connections to the auth service are kept alive by Gatehouse's HTTP client whatever this says",
  ),
  "auth-keepalive-share-vars": tuning(
    "nginx variables are not shared with the auth sub-request here; it carries the headers listed in docs/auth.md",
  ),
  "auth-keepalive-timeout": tuning(
    "connections to the auth service are kept alive by Gatehouse's HTTP client whatever this says",
  ),
  "auth-method": honoured(
    "the method sent to the auth service (then X-Original-URI and X-Scheme are sent too); absent: GET, as nginx's auth_request sends (X-Original-Method names the client's); not an HTTP method: every path answers 401",
  ),
  "auth-proxy-set-headers": guard(externalAuth),
  "auth-realm": honoured(
    'the realm of the `WWW-Authenticate: Basic` challenge ("" when absent, as nginx\'s); one with control characters is refused and "" used',
  ),
  "auth-request-redirect": honoured(
    "the X-Auth-Request-Redirect header sent to the auth service (a template; default the request URI)",
  ),
  "auth-response-headers": honouredGuard(
    "these headers of the service's 2xx answer are set on the upstream request, a client's own copies removed whether the service sent one or not; a name outside [A-Za-z0-9_-] or one that frames the connection (Host, Content-Length, Connection…) makes every path answer 401",
  ),
  "auth-secret": honoured(
    "the Secret (`name` or `namespace/name`, the Ingress's namespace only, as ingress-nginx without allow-cross-namespace-resources) whose users auth-type basic checks; read again when it changes; missing or with no usable user: every path answers 401",
  ),
  "auth-secret-type": honoured(
    "`auth-file` (default: an htpasswd text under the key `auth`) or `auth-map` (each key a user, each value its hash); hashes bcrypt ($2y$/$2a$/$2b$), $apr1$, {SHA} and {SSHA}; a line of another scheme (crypt, plain) or malformed is reported and that user refused, the others served; another value: every path answers 401",
  ),
  "auth-signin": honoured(
    "a 401 from the auth service becomes a 302 here, with `rd=<scheme>://<host><escaped request URI>` unless the URL names that parameter already, and the service's Set-Cookie; a URL that does not parse is reported and the 401 passed on",
  ),
  "auth-signin-redirect-param": honoured(
    "the query parameter auth-signin names the original URL in (default `rd`)",
  ),
  "auth-snippet": refused(snippet, true),
  "auth-tls-error-page": honouredGuard(
    "a client refused for its certificate (the two 400s) gets a 302 to this URL or path (ingress-nginx's syntax; no @named locations; a path is redirected to, not served internally as nginx's error_page does); a bad value is reported and the 400s stay",
  ),
  "auth-tls-match-cn": honouredGuard(
    "`CN=<regex>`: the certificate's subject DN (RFC 2253, as nginx's $ssl_client_s_dn) must match, unanchored as nginx's `~`, else 403; run by Gatehouse's linear-time engine (RE2-like syntax); a value without `CN=` or that does not compile makes the host answer 403 (never open)",
  ),
  "auth-tls-pass-certificate-to-upstream": honouredGuard(
    "the client's certificate goes upstream in `ssl-client-cert` (URL-encoded PEM, as nginx's $ssl_client_escaped_cert); ssl-client-verify/-subject-dn/-issuer-dn are always sent, replacing any a client sent",
    ["false"],
  ),
  "auth-tls-secret": honouredGuard(
    "`<namespace>/<name>` of a Secret whose ca.crt (PEM) verifies client certificates for the Ingress's hosts (a host's setting: the oldest Ingress naming the host decides, as ingress-nginx); the HTTPS listener asks every client for a certificate, each host's SNI entry verifies it with its own CAs, and a request whose host (absolute-form authority, else Host) is not the SNI name is 421; where ingress-nginx serves open (a Secret without ca.crt), or denies (missing, another namespace, not PEM), every path of the host answers 403; --front bun cannot see client certificates: such hosts answer 500 there; with --http2 the raw front offers such names HTTP/1.1 only",
    [""],
  ),
  "auth-tls-verify-client": honouredGuard(
    'on (default; none: 400 "No required SSL certificate was sent", bad: 400 "The SSL certificate error"), optional (none allowed), optional_no_ca (never refused; ssl-client-verify says FAILED), off (none asked; NONE); another value: on, reported',
  ),
  "auth-tls-verify-depth": honouredGuard(
    "the most certificates between the client's and a trusted CA, plus one (default 1, 0 means 1); a longer chain is refused as a bad certificate",
  ),
  "auth-type": honouredGuard(
    "`basic`: users of auth-secret checked on both fronts (bcrypt verified off the event loop, results cached briefly, on at most half the cores at once with 16 queued, then 503), the Authorization header removed upstream as ingress-nginx does; `digest` and other values are refused and every path answers 401 (never open); an AuthPolicy that wins the route replaces it",
    [""],
  ),
  "auth-url": honouredGuard(
    "forward authentication on both fronts (such routes stay on the raw front's fast path): a request without body to the service with the client's headers, X-Original-URL/-Method, X-Real-IP, X-Forwarded-For, X-Auth-Request-Redirect; 2xx admits, 401 and 403 go to the client, any other answer, a redirect or no answer within 5 s is 503 (ingress-nginx: 500), never the backend; an AuthPolicy that wins the route replaces it; a URL that does not parse: every path answers 401",
  ),
  "backend-protocol": honoured(
    "case-insensitive: HTTP (default; a Service port's appProtocol kubernetes.io/h2c still selects h2c), HTTPS (HTTP/1.1 over TLS), GRPC (h2c), GRPCS (HTTP/2 over TLS), AUTO_HTTP (the client's scheme, as nginx's $scheme: TLS for requests that came over HTTPS, cleartext for the others) and H2C (h2c; ingress-nginx refuses this value and speaks HTTP/1.1); each Ingress's own, also on a Service port other Ingresses share; TLS is always verified (proxy-ssl-verify); FCGI is refused: the paths answer 503; another value is reported and HTTP applies, as in ingress-nginx",
  ),
  canary: honoured(
    "the Ingress's paths join the main Ingress's routes for the same host and path (whichever is older) as a canary backend; its other annotations are the main Ingress's, as in ingress-nginx, except that access controls it asks for (unenforced ones, its own AuthPolicy or rate limits) fail its canary routes closed and send its weighted share to the main backend",
  ),
  "canary-by-cookie": honoured("the cookie always → canary, never → main, else the weight decides"),
  "canary-by-header": honoured(
    "the header always → canary, never → main, else the cookie and then the weight decide",
  ),
  "canary-by-header-pattern": honoured(
    "a header value matching this anywhere → canary, run on Gatehouse's linear-time regex engine (PCRE-only constructs are refused)",
  ),
  "canary-by-header-value": honoured("the header equal to this → canary"),
  "canary-weight": honoured(
    "this share (of canary-weight-total) of the remaining requests → canary, at random",
  ),
  "canary-weight-total": honoured("the whole that canary-weight is a share of (default 100)"),
  "client-body-buffer-size": tuning(buffering),
  "configuration-snippet": refused(snippet),
  "connection-proxy-header": tuning(
    "upstream connections are managed by the gateway (keep-alive pooled); this Connection value is not sent",
  ),
  "cors-allow-credentials": honoured(
    "with enable-cors: Access-Control-Allow-Credentials: true unless false (default true; with the origin `*` a literal `*` is still sent, as in ingress-nginx)",
  ),
  "cors-allow-headers": honoured(
    "with enable-cors: the comma-separated header names sent in Access-Control-Allow-Headers (default ingress-nginx's: DNT, Keep-Alive, User-Agent, … Authorization)",
  ),
  "cors-allow-methods": honoured(
    "with enable-cors: the comma-separated methods sent in Access-Control-Allow-Methods (default GET, PUT, POST, DELETE, PATCH, OPTIONS)",
  ),
  "cors-allow-origin": honoured(
    "with enable-cors: the comma-separated origins answered (`https://*.example.com`: one label for `*`; default `*`, sent as `*`); a bad entry is left out, where ingress-nginx may widen the list to `*`",
  ),
  "cors-expose-headers": honoured(
    "with enable-cors: the comma-separated header names (or `*`) sent in Access-Control-Expose-Headers (default none)",
  ),
  "cors-max-age": honoured("with enable-cors: seconds sent in Access-Control-Max-Age (default 1728000)"),
  "custom-headers": honoured(
    "`<namespace>/<name>` of a ConfigMap whose entries are set as response headers on every path of the Ingress, each name only if `--global-allowed-response-headers` lists it (default none, as ingress-nginx's global-allowed-response-headers); where ingress-nginx answers 503 for a missing ConfigMap or a refused entry, the paths are served without it (InvalidAnnotation); the ConfigMap must be in the Ingress's namespace; names are compared case-insensitively; hop-by-hop headers and Content-Length are refused",
  ),
  "custom-http-errors": honoured(
    "with default-backend: responses with these codes (400–599), the gateway's own (502, 503, 504) and the backend's (a guard's refusal counts as one), are replaced by the default-backend's answer to a request with X-Code, X-Format, X-Original-URI, X-Namespace, X-Ingress-Name, X-Service-Name, X-Service-Port, X-Request-ID; passed on unchanged, status included, as ingress-nginx; if it cannot answer, the gateway's own error. 405, 413 and the 404 for a path no route serves are never replaced. Without default-backend the error Service is --default-backend-service's, as ingress-nginx asks its global default backend; without either it is reported and nothing is replaced",
  ),
  "default-backend": honoured(
    "with custom-http-errors: the Service (its first port, in the Ingress's namespace) that renders those errors. Alone, reported: requests to a Service without endpoints get 503 instead of going there",
  ),
  "denylist-source-range": honouredGuard(
    "these client addresses get 403 problem+json, checked before the allow list (deny beats allow, as nginx's deny lines come first); a list that does not parse refuses every client (never open)",
    [""],
  ),
  "disable-proxy-intercept-errors": honoured(
    "\"true\", with custom-http-errors: only the gateway's own errors are replaced; the backend's (and guards' refusals) are passed on",
  ),
  "enable-access-log": honoured(
    '"false": the requests of its paths are left out of the access log (still counted in metrics)',
  ),
  "enable-cors": honoured(
    "true: every OPTIONS from an allowed origin is answered 204 by the gateway and responses to it carry the CORS headers; without it the cors-* annotations do nothing",
  ),
  "enable-global-auth": honoured(
    '`"false"`: the Ingress is not guarded by --global-auth-url (ingress-nginx\'s global-auth-url); anything else asks for nothing more (an Ingress with its own auth-url uses that, an ACME HTTP-01 solver Ingress is never guarded)',
  ),
  "enable-modsecurity": honouredGuard(
    "libmodsecurity3 inspects every path's request line, headers and body (up to gatehouse.dev/waf-body-limit) in DetectionOnly mode, as ingress-nginx's modsecurity.conf sets it (gatehouse.dev/waf-mode: Enforce blocks); responses are not inspected; without the library every path answers 503 (docs/waf.md)",
    ["false"],
  ),
  "enable-opentelemetry": notYet(tracing, ["false"]),
  "enable-owasp-core-rules": honouredGuard(
    "with enable-modsecurity, the OWASP Core Rule Set Debian ships (modsecurity-crs 3.3, REQUEST-* rules) at paranoia level 1 unless gatehouse.dev/waf-paranoia-level says otherwise; alone it does nothing (reported)",
    ["false"],
  ),
  "enable-rewrite-log": tuning(
    "nginx's rewrite debug log has no counterpart (the access log names each request's route)",
  ),
  "fastcgi-index": notYet("FastCGI backends are not supported"),
  "fastcgi-params-configmap": notYet("FastCGI backends are not supported"),
  "force-ssl-redirect": honoured("308 to https even for hosts without a certificate of their own"),
  "from-to-www-redirect": honoured(
    "www.<host> (or <host>, for a www. host) answers 308 to the host, scheme, port (always named), path and query kept, one trailing slash dropped; not made when an Ingress serves that name",
  ),
  "http2-push-preload": tuning("HTTP/2 server push is gone from browsers; nothing is pushed"),
  "limit-allowlist": honoured(
    "clients in these ranges are never rate limited nor capped by limit-connections (the newer name of limit-whitelist)",
  ),
  "limit-burst-multiplier": honoured("each limit's burst is the limit times this (default 5)"),
  "limit-connections": honouredGuard(
    "at most N requests in flight at once per client address on all the Ingress's paths (nginx's limit_conn zone is per Ingress, keyed by client address); one more gets 503 (ingress-nginx's limit-conn-status-code default), counted in each gateway process as nginx counts in each replica; clients in limit-allowlist are exempt, as in ingress-nginx; a value that is not a whole number refuses every request (503), never opens",
    ["0"],
  ),
  "limit-rate": honoured(
    "each response body goes to its client at most N KiB a second (0: no limit), paced per response as nginx does; the pace is counted from the response head (nginx: from the request, in whole seconds, so it lets up to a second's worth more through at first); ingress-nginx's docs say it needs proxy-buffering on, which is off by default there: Gatehouse always paces, with or without proxy-buffering, holding the upstream back rather than buffering its body; on the full request path (--front bun, and what the raw front relays) a paced body is sent chunked (docs/http.md)",
  ),
  "limit-rate-after": honoured(
    "the first N KiB of each response body go at full speed, the rest at limit-rate (alone, or with limit-rate 0, it limits nothing, as in nginx, and is reported: InvalidAnnotation)",
  ),
  "limit-rpm": honoured("N requests per minute per client address, shared by every replica through Redis"),
  "limit-rps": honoured("N requests per second per client address, shared by every replica through Redis"),
  "limit-whitelist": honoured(
    "clients in these ranges are never rate limited nor capped by limit-connections",
  ),
  "load-balance": honoured("round_robin or ewma (two random endpoints, the faster wins); others refused"),
  "mirror-host": honoured(
    "the Host of the mirrored copies (a host with an optional port); default the mirror-target's host name without port, as ingress-nginx",
  ),
  "mirror-request-body": honoured(
    "on (default): a body read whole (Content-Length up to --request-buffer-bytes) is copied, a bigger or chunked one is not mirrored (counted in gatehouse_mirror_requests_total), where nginx buffers any body; off: copies carry no body (Content-Length: 0)",
  ),
  "mirror-target": honoured(
    "every path of the Ingress sends a copy to this http(s) URL and ignores its answer, never delaying the request (nginx's request waits for its mirror); the path may use $request_uri, $uri, $args, $query_string, $is_args, $host, other variables are refused; without a path the request's path is kept (nginx sends /_mirror-<uid>); https certificates are verified",
  ),
  "modsecurity-snippet": refused(snippet, true),
  "modsecurity-transaction-id": honoured(
    "$request_id (the request's X-Request-Id) or $http_<name> names the engine's transaction in the log; other nginx text is reported and an id generated",
  ),
  "opentelemetry-operation-name": notYet(tracing),
  "opentelemetry-trust-incoming-span": notYet(tracing),
  "permanent-redirect": honoured(
    "every path of the Ingress answers this absolute http(s) URL, the query not added; $request_uri, $uri, $args, $is_args, $query_string, $host, $http_host, $scheme and $server_port are filled in, any other variable is refused",
  ),
  "permanent-redirect-code": honoured(
    "301 (default), 302, 303, 307 or 308; ingress-nginx also takes 300, 304, 305 and 306, which nginx answers with no Location",
  ),
  "preserve-trailing-slash": honoured(
    "the https redirect keeps a trailing slash; without it, one is dropped (`/a/` → `/a`), as ingress-nginx does",
  ),
  "proxy-body-size": honoured(
    "request bodies past this size (bytes, or with k, m or g; 0: no limit) get 413: a Content-Length past it before any of the body is read, a chunked or HTTP/2 body once it grows past it (the backend never gets more; a response already started is cut); a value that is not a size is reported and 1m, ingress-nginx's default, applies; without the annotation there is no limit, where ingress-nginx applies its ConfigMap's proxy-body-size (default 1m) (docs/ingress.md)",
  ),
  "proxy-buffer-size": tuning(buffering),
  "proxy-buffering": tuning(buffering),
  "proxy-buffers-number": tuning(buffering),
  "proxy-busy-buffers-size": tuning(buffering),
  "proxy-connect-timeout": honoured(
    "seconds a new upstream connection may take to open: 504, or the next try when retries are on; on --front bun a connect that never opens fails after 1 to 2 times this (docs/http.md)",
  ),
  "proxy-cookie-domain": honoured(
    '"FROM TO": a Set-Cookie Domain equal to FROM (any case, a leading dot kept) becomes TO; `~` regex forms refused',
  ),
  "proxy-cookie-path": honoured(
    '"FROM TO": a Set-Cookie Path starting with FROM gets TO in its place; `~` regex forms refused',
  ),
  "proxy-http-version": tuning(
    "the backend is spoken to in HTTP/1.1 with keep-alive (or h2c by appProtocol), whatever this says",
  ),
  "proxy-max-temp-file-size": tuning(buffering),
  "proxy-next-upstream": honoured(
    "the route's retry policy: timeout and http_NNN retry on those answers, a failed connection is retried whenever retries are on, a request with a body never (it was streamed); invalid_header is not retried",
  ),
  "proxy-next-upstream-timeout": honoured("seconds over all tries (0: no limit)"),
  "proxy-next-upstream-tries": honoured(
    "tries, the first included (default 3 once any proxy-next-upstream annotation is set; 0: up to 10)",
  ),
  "proxy-read-timeout": honoured(
    "seconds to the response head and between two reads of the body, as nginx's proxy_read_timeout (on --front bun the gap is bounded by the listener's idle timeout)",
  ),
  "proxy-redirect-from": honoured(
    "with proxy-redirect-to: a Location or Refresh URL starting with it gets the -to value in its place; " +
      "`off`/`default` change nothing; a path stays relative (nginx makes it absolute); `~` regex refused",
  ),
  "proxy-redirect-to": honoured("what replaces proxy-redirect-from's text; alone it does nothing (reported)"),
  "proxy-request-buffering": tuning(buffering),
  "proxy-send-timeout": honoured(
    "seconds the backend may take no byte of the request (nginx's proxy_send_timeout)",
  ),
  "proxy-ssl-ciphers": notYet(
    "backends are offered the runtime's default TLS 1.2 ciphers whatever this says (TLS 1.3 suites are not configurable)",
    ["default"],
  ),
  "proxy-ssl-name": proxySSL(
    "the name the backend's certificate must carry, sent as SNI; a DNS name, no nginx variables; absent: the Service's cluster DNS name <service>.<namespace>.svc (nginx verifies `upstream_balancer`, which no certificate carries)",
  ),
  "proxy-ssl-protocols": proxySSL(
    "TLSv1.2 and/or TLSv1.3 offered; older versions are reported and left out; absent: both (ingress-nginx: TLSv1.2 beside a proxy-ssl-secret)",
  ),
  "proxy-ssl-secret": proxySSL(
    "`namespace/name` (the Ingress's namespace only, as ingress-nginx): ca.crt verifies the backend's certificate (absent: the runtime's public root CAs), tls.crt and tls.key are presented as the client certificate; a Secret missing, in another namespace, without ca.crt (which ingress-nginx would ignore) or with unusable keys makes the paths answer 503, never cleartext or unverified",
  ),
  "proxy-ssl-server-name": proxySSL(
    "SNI is always sent (the name proxy-ssl-name or its default says); off, ingress-nginx's default, sends none there: reported",
  ),
  "proxy-ssl-verify": proxySSL(
    "the backend's certificate is always verified; off, ingress-nginx's default, is reported (BackendTLSVerified) and verified all the same",
  ),
  "proxy-ssl-verify-depth": notYet(
    "the backend's chain is verified to a trusted CA at any depth, where nginx stops at this many certificates (default 1)",
  ),
  "relative-redirects": honoured(
    "changes nothing, as in ingress-nginx: it touches only redirects nginx builds from a relative URI, and every redirect ingress-nginx (and Gatehouse) issues names an absolute URL",
  ),
  "rewrite-target": honoured(
    "the path sent upstream is this, with $1…$9 from the path's groups; every path of the host becomes a case-insensitive regex, as in ingress-nginx (run on Gatehouse's linear-time engine: PCRE-only constructs are refused)",
  ),
  satisfy: honoured(
    "`any`: a client the Ingress's allow lists admit is served without basic-auth credentials, others must authenticate (401, not 403); unlike nginx, denylist-source-range refuses whatever the credentials; without auth-type or an allow list it changes nothing (reported); another value is reported and read as `all`",
  ),
  "server-alias": honoured(
    "extra names serving each host's routes, also on HTTPS where the host's certificate covers them; DNS names and *. wildcards, not nginx regular expressions; a name an Ingress rule serves is not taken",
  ),
  "server-snippet": refused(snippet),
  "service-upstream": honoured(
    "requests go to the Service's cluster IP and port, not its pods; a Service without a cluster IP (headless) keeps its endpoints, reported",
  ),
  "session-cookie-change-on-failure": sticky("a retry moves the client and reissues the cookie"),
  "session-cookie-conditional-samesite-none": sticky("ingress-nginx's list of user agents"),
  "session-cookie-domain": sticky("the Domain attribute"),
  "session-cookie-expires": sticky("Expires, seconds from the response"),
  "session-cookie-max-age": sticky("Max-Age, seconds"),
  "session-cookie-name": sticky("default INGRESSCOOKIE"),
  "session-cookie-path": sticky("default the Ingress path (`/` for regex paths)"),
  "session-cookie-samesite": sticky("None, Lax or Strict"),
  "session-cookie-secure": sticky("default: Secure on HTTPS listeners"),
  "ssl-ciphers": honoured(
    "the TLS 1.2 cipher list (OpenSSL syntax) of the Ingress's hosts, each host's from the oldest Ingress naming it that sets one; checked by BoringSSL at translation (`@SECLEVEL` and TLS 1.3 names are refused, names matching no suite are reported); `!aNULL:!eNULL:!3DES:!RC4:!MD5` is appended to every list; TLS 1.0/1.1 stay refused and TLS 1.3 suites are BoringSSL's whatever the list",
  ),
  "ssl-passthrough": honoured(
    "with --enable-ssl-passthrough (as in ingress-nginx), TLS to the Ingress's named hosts on the HTTPS port is piped unopened by SNI to the backend of its / path (not for an Ingress asking for an AuthPolicy or rate limits); without the flag, a warning and TLS terminated",
  ),
  "ssl-prefer-server-ciphers": tuning("Gatehouse's own TLS settings apply (docs/tls.md)"),
  "ssl-redirect": honoured("308 to https for hosts with a certificate of their own (docs/tls.md)"),
  "stream-snippet": refused(snippet),
  "temporal-redirect": honoured(
    "as permanent-redirect, answered with temporal-redirect-code; it wins when both are set",
  ),
  "temporal-redirect-code": honoured(
    "301, 302 (default), 303 or 307; ingress-nginx also takes 300, 304, 305 and 306, which nginx answers with no Location",
  ),
  "upstream-hash-by": honoured("consistent hash on $request_uri, $remote_addr, $http_/$cookie_/$arg_NAME"),
  "upstream-hash-by-subset": subsets("the key picks a subset, the request one of its endpoints at random"),
  "upstream-hash-by-subset-size": subsets("the subset's size, default 3"),
  "upstream-vhost": honoured(
    "the Host sent upstream (the client's stays in X-Forwarded-Host); $namespace, $ingress_name, $service_name and $service_port are filled in (a named port as its number); $host alone keeps the client's Host as sent, port included",
  ),
  "use-port-in-redirects": honoured(
    "the https redirect names its port even when it is 443; without it, the port is named when it is not 443 (ingress-nginx names none)",
  ),
  "use-regex": honoured(
    "every path of the host becomes a case-insensitive regex anchored at its start, longest first, as in ingress-nginx (run on Gatehouse's linear-time engine: PCRE-only constructs are refused)",
  ),
  "whitelist-source-range": honouredGuard(
    "the older name of allowlist-source-range, read only when that is absent or empty (ingress-nginx's alias); set to another value beside it, it is reported and not applied",
    [""],
  ),
  "x-forwarded-prefix": honoured(
    "X-Forwarded-Prefix sent upstream, as in ingress-nginx only on paths whose rewrite-target differs from the path; a value with $1 captures or nginx variables is refused",
  ),
};
