/**
 * The objects an Ingress's ingress-nginx annotations name, read by both sides: the Kubernetes source keeps
 * (and fetches) only the ConfigMaps Ingresses name, translate looks them up. Here so that the source
 * needs nothing of translate, and both parse a value the same way.
 */
import type { Ingress } from "./schema/networking.ts";

/** The prefix of every ingress-nginx annotation. */
export const NGINX_PREFIX = "nginx.ingress.kubernetes.io/";
/** `custom-headers: <namespace>/<name>`: a ConfigMap whose entries are set as response headers. */
export const CUSTOM_HEADERS = "custom-headers";

/** Kubernetes object names: a namespace is a DNS label, a ConfigMap's name a DNS subdomain. */
const NAMESPACE = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/;
const NAME = /^[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * `namespace/name` of the `kind` object an annotation value names, or why not; undefined: the value asks
 * for nothing (empty). As ingress-nginx (without `allow-cross-namespace-resources`): a bare name is in the
 * Ingress's namespace, and no other namespace is allowed.
 */
function sameNamespaceKey(
  value: string,
  namespace: string,
  kind: "ConfigMap" | "Secret",
): { key: string } | { why: string } | undefined {
  const v = value.trim();
  if (v === "") return undefined;
  const parts = v.split("/");
  const [ns, name] = parts.length === 1 ? [namespace, parts[0] as string] : [parts[0] as string, parts[1]];
  if (parts.length > 2 || name === undefined || !NAMESPACE.test(ns) || !NAME.test(name))
    return { why: `must be <namespace>/<${kind} name> or <${kind} name>` };
  if (ns !== namespace) return { why: `the ${kind} must be in the Ingress's namespace (${namespace})` };
  return { key: `${ns}/${name}` };
}

/** The ConfigMap a custom-headers value names (sameNamespaceKey). */
export function configMapKey(value: string, namespace: string) {
  return sameNamespaceKey(value, namespace, "ConfigMap");
}

/** The Ingress's namespace, "default" when it has none (as translate's namespaceOf). */
function ingressNamespace(ingress: Ingress): string {
  const ns = ingress.metadata?.namespace;
  return typeof ns === "string" && ns !== "" ? ns : "default";
}

/**
 * `namespace/name` of the ConfigMap an Ingress's custom-headers names, or undefined (none, or a value
 * that names none): the Kubernetes source keeps only these ConfigMaps' data.
 */
export function customHeadersConfigMap(ingress: Ingress): string | undefined {
  const raw = ingress.metadata?.annotations?.[NGINX_PREFIX + CUSTOM_HEADERS];
  const parsed = typeof raw === "string" ? configMapKey(raw, ingressNamespace(ingress)) : undefined;
  return parsed !== undefined && "key" in parsed ? parsed.key : undefined;
}

/** `auth-tls-secret: <namespace>/<name>`: a Secret whose `ca.crt` verifies client certificates. */
export const AUTH_TLS_SECRET = "auth-tls-secret";

/**
 * `namespace/name` an auth-tls-secret value names, or why not. As ingress-nginx (k8s.ParseNameNS) the
 * value is `namespace/name` (an empty namespace means the Ingress's); unlike its
 * `allow-cross-namespace-resources`, the Secret must be in the Ingress's namespace, so an Ingress cannot
 * make the gateway trust a CA another namespace keeps.
 */
export function authTLSSecretKey(value: string, namespace: string): { key: string } | { why: string } {
  const parts = value.trim().split("/");
  if (parts.length !== 2) return { why: "must be <namespace>/<Secret name>" };
  const ns = parts[0] === "" ? namespace : (parts[0] as string);
  const name = parts[1] as string;
  if (!NAMESPACE.test(ns) || !NAME.test(name)) return { why: "must be <namespace>/<Secret name>" };
  if (ns !== namespace) return { why: `the Secret must be in the Ingress's namespace (${namespace})` };
  return { key: `${ns}/${name}` };
}

/** `namespace/name` of the Secret an Ingress's auth-tls-secret names, or undefined: the source keeps it. */
export function authTLSSecret(ingress: Ingress): string | undefined {
  const raw = ingress.metadata?.annotations?.[NGINX_PREFIX + AUTH_TLS_SECRET];
  const parsed = typeof raw === "string" ? authTLSSecretKey(raw, ingressNamespace(ingress)) : undefined;
  return parsed !== undefined && "key" in parsed ? parsed.key : undefined;
}

/** `auth-secret: [<namespace>/]<name>`: the Secret holding the users of `auth-type: basic`. */
export const AUTH_SECRET = "auth-secret";

/** The Secret an auth-secret value names (sameNamespaceKey). */
export function authSecretKey(value: string, namespace: string) {
  return sameNamespaceKey(value, namespace, "Secret");
}

/** `namespace/name` of the Secret an Ingress's auth-secret names, or undefined: the source keeps its data. */
export function authSecret(ingress: Ingress): string | undefined {
  const raw = ingress.metadata?.annotations?.[NGINX_PREFIX + AUTH_SECRET];
  const parsed = typeof raw === "string" ? authSecretKey(raw, ingressNamespace(ingress)) : undefined;
  return parsed !== undefined && "key" in parsed ? parsed.key : undefined;
}

/** `proxy-ssl-secret: <namespace>/<name>`: the CA (`ca.crt`) and client certificate for TLS to backends. */
export const PROXY_SSL_SECRET = "proxy-ssl-secret";

/**
 * `namespace/name` of the Secret an Ingress's proxy-ssl-secret names, or undefined: the source keeps it.
 * Read as auth-tls-secret is (authTLSSecretKey): ingress-nginx's proxyssl parser takes `namespace/name`
 * and refuses another namespace than the Ingress's ("cross namespace secrets are not supported").
 */
export function proxySSLSecret(ingress: Ingress): string | undefined {
  const raw = ingress.metadata?.annotations?.[NGINX_PREFIX + PROXY_SSL_SECRET];
  const parsed = typeof raw === "string" ? authTLSSecretKey(raw, ingressNamespace(ingress)) : undefined;
  return parsed !== undefined && "key" in parsed ? parsed.key : undefined;
}
