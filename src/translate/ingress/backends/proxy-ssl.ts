/**
 * ingress-nginx's `proxy-ssl-*` annotations (internal/ingress/annotations/proxyssl; nginx.tmpl writes them
 * as `proxy_ssl_*` in each location): how the gateway speaks TLS to the backends of an Ingress whose
 * `backend-protocol` asks for TLS (backend-protocol.ts). What differs, by design:
 * - the backend's certificate is always verified (`proxy-ssl-verify: off`, ingress-nginx's default, is not
 *   honoured): against `ca.crt` of `proxy-ssl-secret`, else the runtime's public roots;
 * - the name verified, and sent as SNI whatever `proxy-ssl-server-name` says, is `proxy-ssl-name`, else
 *   each Service's cluster DNS name `<service>.<namespace>.svc` (nginx's default is `upstream_balancer`,
 *   which no certificate carries, and no SNI);
 * - ingress-nginx reads the other proxy-ssl-* only beside a proxy-ssl-secret, and applies none to GRPCS
 *   (nginx's grpc_pass takes `grpc_ssl_*`): Gatehouse applies them with or without the Secret, to GRPCS too;
 * - a Secret without `ca.crt` is unusable here (ingress-nginx ignores it and verifies nothing): the paths
 *   answer 503, never cleartext or unverified TLS, as ingress-nginx answers 503 for a Secret it cannot read.
 * `proxy-ssl-ciphers` and `proxy-ssl-verify-depth` are not honoured (the audit reports them).
 */
import type { BackendTLS, TLSVersion } from "../../../model/index.ts";
import { authTLSSecretKey, PROXY_SSL_SECRET } from "../../../sources/nginx-references.ts";
import { secretText } from "../../common/objects.ts";
import { readTLSSecret } from "../../common/tls-secret.ts";
import { findCA, type SecretSources } from "../access/client-certificates.ts";
import type { AnnotationReader } from "../annotations/route-edits.ts";

export const PROXY_SSL_ANNOTATIONS = [
  PROXY_SSL_SECRET,
  "proxy-ssl-name",
  "proxy-ssl-verify",
  "proxy-ssl-server-name",
  "proxy-ssl-protocols",
  "proxy-ssl-ciphers",
  "proxy-ssl-verify-depth",
] as const;

/** The TLS one Ingress asks for; the server name, when not given, is each backend's Service's. */
export interface IngressBackendTLS {
  /** `proxy-ssl-name`, lower-case; absent: `<service>.<namespace>.svc` of each backend. */
  readonly serverName?: string;
  readonly caPem?: string;
  readonly clientCertificate?: BackendTLS["clientCertificate"];
  readonly versions?: BackendTLS["versions"];
  /** `namespace/name` of the proxy-ssl-secret, when one is named. */
  readonly secret?: string;
  /** Why TLS cannot be set up as asked: the backends answer 503 (InvalidBackendTLS). */
  readonly invalid?: string;
  /** `proxy-ssl-verify: on`: ingress-nginx verifies too (otherwise it does not). */
  readonly verifyAsked: boolean;
  /** `proxy-ssl-server-name: on`: ingress-nginx sends SNI too (otherwise it does not). */
  readonly sniAsked: boolean;
}

/** A DNS name (RFC 1123 labels), as a certificate and SNI carry it. */
const DNS_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)*$/;
const OFFERED: Readonly<Record<string, TLSVersion>> = { "tlsv1.2": "TLSv1.2", "tlsv1.3": "TLSv1.3" };
const TOO_OLD = new Set(["sslv2", "sslv3", "tlsv1", "tlsv1.1"]);

/** The `proxy-ssl-*` settings of an Ingress in `namespace`; problems go through `r`. */
export function readProxySSL(
  r: AnnotationReader,
  namespace: string,
  sources: SecretSources,
  warn: (name: string, value: string, message: string) => void,
): IngressBackendTLS {
  const serverName = serverNameOf(r);
  const verifyAsked = onOff(r, "proxy-ssl-verify", "the certificate is verified all the same");
  const sniAsked = onOff(r, "proxy-ssl-server-name", "the server name is sent as SNI all the same");
  const versions = versionsOf(r, warn);
  const base = {
    ...(serverName !== undefined ? { serverName } : {}),
    ...(versions !== undefined ? { versions } : {}),
    verifyAsked,
    sniAsked,
  };
  const raw = r.raw(PROXY_SSL_SECRET);
  if (raw === undefined || raw.trim() === "") return base;
  const key = authTLSSecretKey(raw, namespace);
  if ("why" in key) return refused(r, raw, base, key.why);
  const ca = findCA(key.key, sources);
  const secret = key.key;
  if (typeof ca === "string") {
    const why = ca.endsWith("has no ca.crt")
      ? `${ca}: Gatehouse verifies every backend certificate and needs the CA that signs it there (ingress-nginx ignores such a Secret and verifies nothing)`
      : ca;
    return refused(r, raw, { ...base, secret }, why);
  }
  const found = sources.secrets.get(secret);
  const cert = found === undefined ? undefined : secretText(found, "tls.crt");
  const keyPem = found === undefined ? undefined : secretText(found, "tls.key");
  if (found === undefined || (cert === undefined && keyPem === undefined))
    return { ...base, secret, caPem: ca.pem };
  if (cert === undefined || keyPem === undefined) {
    const has = cert === undefined ? "tls.key without tls.crt" : "tls.crt without tls.key";
    warn(
      PROXY_SSL_SECRET,
      raw,
      `Secret ${secret} has ${has}: no client certificate is presented (as in ingress-nginx)`,
    );
    return { ...base, secret, caPem: ca.pem };
  }
  // Any Secret type, as ingress-nginx reads the keys of any Secret; the checks are the TLS Secret's.
  const pair = readTLSSecret({ ...found, type: undefined });
  if (typeof pair === "string") return refused(r, raw, { ...base, secret }, `Secret ${secret} ${pair}`);
  return {
    ...base,
    secret,
    caPem: ca.pem,
    clientCertificate: { certPem: pair.certPem, keyPem: pair.keyPem },
  };
}

function refused(r: AnnotationReader, raw: string, base: IngressBackendTLS, why: string): IngressBackendTLS {
  r.bad(
    PROXY_SSL_SECRET,
    raw,
    `${why}, so the Ingress's paths answer 503 (never cleartext, never unverified)`,
  );
  return { ...base, invalid: `${PROXY_SSL_SECRET} ${JSON.stringify(raw)}: ${why}` };
}

function serverNameOf(r: AnnotationReader): string | undefined {
  const raw = r.raw("proxy-ssl-name");
  if (raw === undefined || raw.trim() === "") return undefined;
  const name = raw.trim().toLowerCase().replace(/\.$/, "");
  if (DNS_NAME.test(name)) return name;
  const why = raw.includes("$")
    ? "nginx variables are not supported, only a DNS name"
    : "must be a DNS name (the name the backend's certificate carries)";
  return r.bad("proxy-ssl-name", raw, `${why}; each Service's <service>.<namespace>.svc is verified instead`);
}

/** `on` or `off` (ingress-nginx's `^(on|off)$`; anything else is its default, off). */
function onOff(r: AnnotationReader, name: string, anyway: string): boolean {
  const raw = r.raw(name);
  if (raw === undefined || raw.trim() === "" || raw.trim() === "off") return false;
  if (raw.trim() === "on") return true;
  r.bad(name, raw, `must be "on" or "off" (ingress-nginx then reads off); ${anyway}`);
  return false;
}

/** `proxy-ssl-protocols`: space-separated TLSv1.2 and TLSv1.3; older versions are reported and left out. */
function versionsOf(
  r: AnnotationReader,
  warn: (name: string, value: string, message: string) => void,
): BackendTLS["versions"] | undefined {
  const raw = r.raw("proxy-ssl-protocols");
  if (raw === undefined || raw.trim() === "") return undefined;
  const offered = new Set<TLSVersion>();
  const old: string[] = [];
  const unknown: string[] = [];
  for (const token of raw.trim().split(/\s+/)) {
    const v = OFFERED[token.toLowerCase()];
    if (v !== undefined) offered.add(v);
    else if (TOO_OLD.has(token.toLowerCase())) old.push(token);
    else unknown.push(token);
  }
  const left = [
    ...(old.length > 0
      ? [`${old.join(", ")} cannot be offered (Gatehouse speaks TLS 1.2 and 1.3 to backends)`]
      : []),
    ...(unknown.length > 0
      ? [`${unknown.map((u) => JSON.stringify(u)).join(", ")} is not a TLS version`]
      : []),
  ].join("; ");
  if (offered.size === 0) {
    r.bad("proxy-ssl-protocols", raw, `${left}; TLS 1.2 and 1.3 are offered`);
    return undefined;
  }
  const min = offered.has("TLSv1.2") ? "TLSv1.2" : "TLSv1.3";
  const max = offered.has("TLSv1.3") ? "TLSv1.3" : "TLSv1.2";
  if (left !== "")
    warn("proxy-ssl-protocols", raw, `${left}; ${min === max ? min : `${min} and ${max}`} offered`);
  return { min, max };
}
