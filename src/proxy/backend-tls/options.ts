/**
 * A backend's TLS settings (model BackendTLS) as the clients that speak to it take them: `fetch` and
 * Bun's WebSocket client (`tls`), and node:http2 (`connect`'s options, ALPN `h2`). Built once per compiled
 * backend, so every request to a backend hands fetch the same object and fetch keeps its connections
 * (measured with Bun 1.4.5: equal options share the pool; a new handshake only when they differ).
 *
 * The certificate is always verified: its chain against `caPem` (or the runtime's public roots), then its
 * names, against `serverName`, or against the policy's `subjectAltNames` when it has some
 * (subject-alt-names.ts; a `checkServerIdentity` runs only after the chain has been verified, measured).
 * There is no option to turn verification off: a backend that cannot prove its name is never spoken to.
 *
 * One cost measured: fetch does not pool connections whose options carry a `checkServerIdentity`, so a
 * backend validated by `subjectAltNames` pays a handshake per request on the full request path
 * (docs/http.md "TLS to backends").
 */
import type { SecureClientSessionOptions } from "node:http2";
import type { BackendTLS, TLSVersion } from "../../model/index.ts";
import { subjectAltNameCheck } from "./subject-alt-names.ts";

/** OpenSSL's numbers for the versions, as fetch's `minVersion`/`maxVersion` take them (not names). */
const VERSION_NUMBER: Readonly<Record<TLSVersion, number>> = { "TLSv1.2": 0x0303, "TLSv1.3": 0x0304 };

/** The `tls` option of Bun's fetch and WebSocket client, as far as Gatehouse sets it. */
export interface FetchTLS {
  readonly serverName: string;
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly minVersion?: number;
  readonly maxVersion?: number;
  readonly checkServerIdentity?: (host: string, cert: { subjectaltname?: string }) => Error | undefined;
}

export interface CompiledBackendTLS {
  /** For fetch and WebSocket: the same object on every request. */
  readonly fetch: FetchTLS;
  /** For node:http2 `connect` to `https://ip:port`. */
  readonly http2: SecureClientSessionOptions;
  /**
   * Names these settings: HTTP/2 sessions are kept per endpoint and key, so a changed CA, name or client
   * certificate never reuses a session opened under the old ones.
   */
  readonly key: string;
  /** What the certificate is checked against, for logs. */
  readonly expects: string;
}

export function compileBackendTLS(t: BackendTLS): CompiledBackendTLS {
  const check = t.subjectAltNames?.length ? subjectAltNameCheck(t.subjectAltNames) : undefined;
  const client = t.clientCertificate;
  const fetch: FetchTLS = {
    serverName: t.serverName,
    ...(t.caPem !== undefined ? { ca: t.caPem } : {}),
    ...(client !== undefined ? { cert: client.certPem, key: client.keyPem } : {}),
    ...(t.versions !== undefined
      ? { minVersion: VERSION_NUMBER[t.versions.min], maxVersion: VERSION_NUMBER[t.versions.max] }
      : {}),
    ...(check !== undefined ? { checkServerIdentity: check } : {}),
  };
  const http2: SecureClientSessionOptions = {
    servername: t.serverName,
    ALPNProtocols: ["h2"],
    ...(t.caPem !== undefined ? { ca: t.caPem } : {}),
    ...(client !== undefined ? { cert: client.certPem, key: client.keyPem } : {}),
    ...(t.versions !== undefined ? { minVersion: t.versions.min, maxVersion: t.versions.max } : {}),
    ...(check !== undefined ? { checkServerIdentity: check } : {}),
  };
  const expects =
    t.subjectAltNames?.length === undefined || t.subjectAltNames.length === 0
      ? `name ${t.serverName}`
      : `one of ${t.subjectAltNames.map((s) => `${s.type} ${s.value}`).join(", ")}`;
  const key = String(
    Bun.hash(
      JSON.stringify([
        t.serverName,
        t.caPem ?? "",
        t.subjectAltNames ?? [],
        client?.certPem ?? "",
        client?.keyPem ?? "",
        t.versions ?? "",
      ]),
    ),
  );
  return { fetch, http2, key, expects: `${expects}, CA ${t.caPem === undefined ? "system roots" : "given"}` };
}

/** `https://ip:port` for an endpoint base `http://ip:port` of a TLS backend. */
export function tlsOrigin(base: string): string {
  return `https${base.slice(4)}`;
}

/**
 * Whether a failed request to a TLS backend failed in TLS (a refused certificate, a failed handshake)
 * rather than in connecting: told apart by the error codes Bun's clients give (measured: fetch gives the
 * verification code, e.g. `ERR_TLS_CERT_ALTNAME_INVALID`, `SELF_SIGNED_CERT_IN_CHAIN`, or `EPROTO`).
 */
export function isTLSFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return (
    code.startsWith("ERR_TLS") ||
    code === "EPROTO" ||
    TLS_VERIFY_CODES.has(code) ||
    code.startsWith("ERR_SSL")
  );
}

/** OpenSSL's certificate verification outcomes, as Node and Bun name them. */
const TLS_VERIFY_CODES: ReadonlySet<string> = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "HOSTNAME_MISMATCH",
]);
