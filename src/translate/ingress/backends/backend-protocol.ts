/**
 * ingress-nginx's `backend-protocol` (internal/ingress/annotations/backendprotocol; template.go
 * buildProxyPass): how the paths of an Ingress speak to their Services. Read case-insensitively and
 * trimmed, as ingress-nginx's validator does:
 * - `HTTP` (default): HTTP/1.1 in cleartext (a Service port's appProtocol `kubernetes.io/h2c` still
 *   selects h2c, as for every backend);
 * - `HTTPS`: HTTP/1.1 over TLS, with the `proxy-ssl-*` settings (proxy-ssl.ts);
 * - `GRPC`: h2c (nginx's `grpc_pass grpc://`); `GRPCS`: HTTP/2 over TLS (`grpcs://`), with proxy-ssl-*;
 * - `AUTO_HTTP`: the client's scheme (nginx's `$scheme://`): cleartext for requests that came over HTTP,
 *   TLS for those that came over HTTPS;
 * - `H2C`: h2c. Not an ingress-nginx value (it refuses it and speaks HTTP/1.1): taken, and said;
 * - `FCGI`: refused (no FastCGI client here): the paths answer 503 rather than speak HTTP to a FastCGI
 *   server.
 * Another value is reported and HTTP applies, as ingress-nginx falls back to HTTP. The backends are the
 * Ingress's own variants of the Service ports (backend-variants.ts), so an Ingress sharing a port with
 * others changes only its own paths. A canary Ingress's setting is not read: its paths take the main
 * Ingress's, as its other annotations do (canary.ts).
 */
import type { Problem, SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { namespaceOf } from "../../common/objects.ts";
import { problem } from "../../common/problems.ts";
import type { SecretSources } from "../access/client-certificates.ts";
import { NGINX_PREFIX } from "../annotations/nginx-annotations.ts";
import { annotationReader } from "../annotations/route-edits.ts";
import { type IngressBackendTLS, PROXY_SSL_ANNOTATIONS, readProxySSL } from "./proxy-ssl.ts";

export const BACKEND_PROTOCOL = "backend-protocol";

/** What an Ingress's backend-protocol asks for, when it asks for more than HTTP. */
export type IngressBackendProtocol = "HTTPS" | "GRPC" | "GRPCS" | "H2C" | "AUTO_HTTP" | "FCGI";

export interface IngressBackendSettings {
  readonly protocol: IngressBackendProtocol;
  /** HTTPS, GRPCS and AUTO_HTTP: the TLS to speak. */
  readonly tls?: IngressBackendTLS;
}

const KNOWN = new Set(["HTTP", "HTTPS", "GRPC", "GRPCS", "H2C", "AUTO_HTTP", "FCGI"]);
const WITH_TLS = new Set<IngressBackendProtocol>(["HTTPS", "GRPCS", "AUTO_HTTP"]);

/** Whether an Ingress sets backend-protocol or any proxy-ssl-* annotation (a canary's are not read). */
export function asksBackendProtocol(ingress: Ingress): boolean {
  const annotations = ingress.metadata?.annotations ?? {};
  return [BACKEND_PROTOCOL, ...PROXY_SSL_ANNOTATIONS].some((n) =>
    Object.hasOwn(annotations, NGINX_PREFIX + n),
  );
}

/** The backend settings of one Ingress (undefined: plain HTTP), every annotation read reported on. */
export function readBackendSettings(
  ingress: Ingress,
  ref: SourceRef,
  sources: SecretSources,
): { settings?: IngressBackendSettings; problems: Problem[] } {
  const problems: Problem[] = [];
  if (!asksBackendProtocol(ingress)) return { problems };
  const r = annotationReader(ingress, ref, problems);
  const raw = r.raw(BACKEND_PROTOCOL);
  const value = raw?.trim().toUpperCase() ?? "HTTP";
  let protocol: IngressBackendProtocol | undefined;
  if (raw !== undefined && value !== "" && !KNOWN.has(value))
    r.bad(
      BACKEND_PROTOCOL,
      raw,
      "must be HTTP, HTTPS, GRPC, GRPCS, AUTO_HTTP or H2C (case-insensitive); HTTP/1.1 in cleartext applies, as ingress-nginx falls back to HTTP",
    );
  else if (value !== "HTTP" && value !== "") protocol = value as IngressBackendProtocol;
  const tlsAsked = protocol !== undefined && WITH_TLS.has(protocol);
  const setSSL = PROXY_SSL_ANNOTATIONS.filter((n) => r.raw(n) !== undefined);
  if (!tlsAsked && setSSL.length > 0) {
    const keys = setSSL.map((n) => NGINX_PREFIX + n).join(", ");
    const message = `annotations ${keys}: do nothing without backend-protocol HTTPS, GRPCS or AUTO_HTTP (the backend is not spoken to over TLS); not applied`;
    problems.push(problem(ref, "InvalidAnnotation", message, "warning"));
  }
  if (protocol === undefined) return { problems };
  if (protocol === "FCGI") {
    const message = `annotation ${NGINX_PREFIX}${BACKEND_PROTOCOL} ${JSON.stringify(raw)}: FastCGI backends are not supported; every path of the Ingress answers 503 rather than speak HTTP to a FastCGI server`;
    problems.push(problem(ref, "UnsupportedBackendProtocol", message));
    return { settings: { protocol }, problems };
  }
  if (protocol === "H2C") {
    const message = `annotation ${NGINX_PREFIX}${BACKEND_PROTOCOL} ${JSON.stringify(raw)}: the backends are spoken to with h2c (HTTP/2 without TLS); ingress-nginx does not know this value and speaks HTTP/1.1 instead`;
    problems.push(problem(ref, "BackendProtocolDiffers", message, "info"));
  }
  if (!tlsAsked) return { settings: { protocol }, problems };
  const warn = (name: string, value: string, message: string) => {
    const text = `annotation ${NGINX_PREFIX}${name} ${JSON.stringify(value)}: ${message}`;
    problems.push(problem(ref, "InvalidAnnotation", text, "warning"));
  };
  const tls = readProxySSL(r, namespaceOf(ingress), sources, warn);
  return { settings: { protocol, tls }, problems };
}
