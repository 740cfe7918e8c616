/**
 * Every honoured ingress-nginx annotation, live on both fronts: each case of the `*.cases.ts` files in this
 * folder sends the request ingress-nginx's docs describe and checks the answer they promise (harness.ts).
 * The coverage test fails when an annotation the table (nginx-annotations.ts) calls honoured has no case
 * here and no live test elsewhere, so flipping an entry to "honoured" needs a live test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { NGINX_ANNOTATIONS } from "../../../src/translate/ingress/annotations/nginx-annotations.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { type AnnotationCase, caseManifests, sendCase, startScriptedBackend } from "./harness.ts";

/** Honoured annotations whose live tests live in other suites (the file says which). */
const LIVE_ELSEWHERE: Readonly<Record<string, string>> = {
  "force-ssl-redirect": "test/integration/tls/tls.test.ts",
  "auth-url": "test/integration/auth/forward-auth.test.ts",
  "auth-method": "test/integration/auth/forward-auth.test.ts",
  "auth-signin": "test/integration/auth/forward-auth.test.ts",
  "auth-signin-redirect-param": "test/integration/auth/forward-auth.test.ts",
  "auth-response-headers": "test/integration/auth/forward-auth.test.ts",
  "auth-request-redirect": "test/integration/auth/forward-auth.test.ts",
  "auth-cache-key": "test/integration/auth/forward-auth.test.ts",
  "auth-cache-duration": "test/integration/auth/forward-auth.test.ts",
  "auth-always-set-cookie": "test/integration/auth/forward-auth.test.ts",
  "enable-global-auth": "test/integration/auth/forward-auth.test.ts",
  "auth-tls-secret": "test/integration/tls/ingress-client-certificates.test.ts",
  "auth-tls-verify-client": "test/integration/tls/ingress-client-certificates.test.ts",
  "auth-tls-verify-depth": "test/integration/tls/ingress-client-certificates.test.ts",
  "auth-tls-error-page": "test/integration/tls/ingress-client-certificates.test.ts",
  "auth-tls-match-cn": "test/integration/tls/ingress-client-certificates.test.ts",
  "auth-tls-pass-certificate-to-upstream": "test/integration/tls/ingress-client-certificates.test.ts",
  "ssl-redirect": "test/integration/tls/tls.test.ts",
  "limit-rps": "test/integration/ratelimit/serve.test.ts",
  "limit-rpm": "test/integration/ratelimit/serve.test.ts",
  "limit-burst-multiplier": "test/integration/ratelimit/serve.test.ts",
  "limit-allowlist": "test/integration/ratelimit/serve.test.ts",
  "limit-whitelist": "test/integration/ratelimit/serve.test.ts",
  "global-rate-limit": "test/integration/ratelimit/global-rate-limit.test.ts",
  "global-rate-limit-window": "test/integration/ratelimit/global-rate-limit.test.ts",
  "global-rate-limit-key": "test/integration/ratelimit/global-rate-limit.test.ts",
  "global-rate-limit-ignored-cidrs": "test/integration/ratelimit/global-rate-limit.test.ts",
  "enable-access-log": "test/integration/ingress-annotations/upstream-request-live.test.ts",
  "service-upstream": "test/integration/ingress-annotations/upstream-request-live.test.ts",
  "proxy-connect-timeout": "test/integration/ingress-annotations/upstream-request-live.test.ts",
  "proxy-body-size": "test/integration/ingress-annotations/request-body-size.test.ts",
  "custom-http-errors": "test/integration/ingress-annotations/error-pages-live.test.ts",
  "default-backend": "test/integration/ingress-annotations/error-pages-live.test.ts",
  "disable-proxy-intercept-errors": "test/integration/ingress-annotations/error-pages-live.test.ts",
  affinity: "test/integration/balancing/sticky-and-hash.test.ts",
  "affinity-mode": "test/integration/balancing/sticky-and-hash.test.ts",
  "load-balance": "test/integration/balancing/sticky-and-hash.test.ts",
  "upstream-hash-by": "test/integration/balancing/sticky-and-hash.test.ts",
  "upstream-hash-by-subset": "test/integration/balancing/sticky-and-hash.test.ts",
  "upstream-hash-by-subset-size": "test/integration/balancing/sticky-and-hash.test.ts",
  "session-cookie-change-on-failure": "test/integration/balancing/sticky-and-hash.test.ts",
  "session-cookie-conditional-samesite-none": "test/integration/balancing/sticky-and-hash.test.ts",
  "session-cookie-domain": "test/integration/balancing/sticky-and-hash.test.ts",
  "session-cookie-expires": "test/integration/balancing/sticky-and-hash.test.ts",
  "session-cookie-max-age": "test/integration/balancing/sticky-and-hash.test.ts",
  "session-cookie-name": "test/integration/balancing/sticky-and-hash.test.ts",
  "session-cookie-path": "test/integration/balancing/sticky-and-hash.test.ts",
  "session-cookie-samesite": "test/integration/balancing/sticky-and-hash.test.ts",
  "session-cookie-secure": "test/integration/balancing/sticky-and-hash.test.ts",
  "ssl-passthrough": "test/integration/ingress-annotations/ssl-passthrough.test.ts",
  "backend-protocol": "test/integration/ingress-annotations/backend-protocol.test.ts",
  "proxy-ssl-secret": "test/integration/ingress-annotations/backend-protocol.test.ts",
  "proxy-ssl-name": "test/integration/ingress-annotations/backend-protocol.test.ts",
  "proxy-ssl-protocols": "test/integration/ingress-annotations/backend-protocol.test.ts",
  "proxy-ssl-server-name": "test/integration/ingress-annotations/backend-protocol.test.ts",
  "proxy-ssl-verify": "test/integration/ingress-annotations/backend-protocol.test.ts",
  "ssl-ciphers": "test/integration/ingress-annotations/ssl-ciphers.test.ts",
  "mirror-target": "test/integration/ingress-annotations/mirror.test.ts",
  "mirror-host": "test/integration/ingress-annotations/mirror.test.ts",
  "mirror-request-body": "test/integration/ingress-annotations/mirror.test.ts",
  "limit-rate": "test/integration/ingress-annotations/response-bandwidth.test.ts",
  "limit-rate-after": "test/integration/ingress-annotations/response-bandwidth.test.ts",
  "enable-modsecurity": "test/integration/waf/waf.test.ts",
  "enable-owasp-core-rules": "test/integration/waf/waf.test.ts",
  "modsecurity-transaction-id": "test/integration/waf/waf.test.ts",
  "limit-connections": "test/integration/proxy/circuit-breaker.test.ts",
  canary: "test/integration/ingress-annotations/canary.test.ts",
  "canary-by-cookie": "test/integration/ingress-annotations/canary.test.ts",
  "canary-by-header": "test/integration/ingress-annotations/canary.test.ts",
  "canary-by-header-pattern": "test/integration/ingress-annotations/canary.test.ts",
  "canary-by-header-value": "test/integration/ingress-annotations/canary.test.ts",
  "canary-weight": "test/integration/ingress-annotations/canary.test.ts",
  "canary-weight-total": "test/integration/ingress-annotations/canary.test.ts",
};

const cases: AnnotationCase[] = [];
/** Serve flags a case file needs (its `gatewayFlags` export), for the one gateway every case shares. */
const gatewayFlags: string[] = [];
for (const file of [...new Bun.Glob("*.cases.ts").scanSync(import.meta.dir)].sort()) {
  const mod = (await import(join(import.meta.dir, file))) as {
    cases: readonly AnnotationCase[];
    gatewayFlags?: readonly string[];
  };
  cases.push(...mod.cases);
  gatewayFlags.push(...(mod.gatewayFlags ?? []));
}

describe("the annotation table's live coverage", () => {
  test("every honoured annotation has a live case here or a live test elsewhere", async () => {
    const covered = new Set(cases.flatMap((c) => c.covers));
    const missing: string[] = [];
    for (const [name, entry] of Object.entries(NGINX_ANNOTATIONS)) {
      if (entry.support !== "honoured" || covered.has(name)) continue;
      const elsewhere = LIVE_ELSEWHERE[name];
      if (elsewhere === undefined || !(await Bun.file(join(import.meta.dir, "../../..", elsewhere)).exists()))
        missing.push(name);
    }
    expect(missing).toEqual([]);
  });

  test("each case covers annotations the table knows", () => {
    const unknown = cases.flatMap((c) => c.covers).filter((n) => !Object.hasOwn(NGINX_ANNOTATIONS, n));
    expect(unknown).toEqual([]);
  });
});

forEachFront("honoured ingress-nginx annotations", (front) => {
  let backend: ReturnType<typeof startScriptedBackend>;
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    // Cases with refused values log errors on purpose.
    restore = setLogSink(() => {});
    backend = startScriptedBackend();
    dir = await mkdtemp(join(tmpdir(), "gatehouse-annotation-cases-"));
    await writeFile(join(dir, "cases.yaml"), caseManifests(cases, backend.port));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front, ...gatewayFlags]));
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    backend?.stop();
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  cases.forEach((c, i) => {
    test(c.name, async () => {
      c.check(await sendCase(port, i, c));
    });
  });
});
