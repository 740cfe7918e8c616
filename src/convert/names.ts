/**
 * The names of every object `gatehouse convert` writes, built here only, so the output, its comments and
 * the tests that look objects up agree.
 */

/** The Gateway written when no `--gateway` is given: the Ingress listeners' stand-in. */
export const CONVERTED_GATEWAY = { namespace: "default", name: "gatehouse" } as const;

/** The GatewayClass that Gatehouse's deploy manifests create (deploy/classes.yaml). */
export const CONVERTED_GATEWAY_CLASS = "gatehouse";

/** The plain-HTTP listener of the written Gateway (the Ingress `--http-port` listener). */
export const HTTP_LISTENER = "http";

/** The HTTPS listener without a hostname, present with `--default-certificate`. */
export const HTTPS_LISTENER = "https";

/** What a comment and a stderr line start with. */
export const NOTE_PREFIX = "gatehouse convert:";

/**
 * Names unique within a namespace, for the HTTPRoutes and policies made from Ingresses: the first object
 * made from an Ingress takes the Ingress's own name (reserved for it); others take `<name>-2`, `<name>-3`…,
 * skipping every reserved name (another Ingress's, a policy's that is written again) and every name given,
 * so no object written replaces another.
 */
export class NamePicker {
  readonly #reserved: Set<string>;
  readonly #given = new Set<string>();

  /** `reserved`: `namespace/name` of names that belong to an object (given only to it, with `own`). */
  constructor(reserved: Iterable<string>) {
    this.#reserved = new Set(reserved);
  }

  /** `base` itself when `own` (the name is this object's) and not given yet; else the first free `base-N`. */
  pick(namespace: string, base: string, own: boolean): string {
    const key = (name: string) => `${namespace}/${name}`;
    if (own && !this.#given.has(key(base))) {
      this.#given.add(key(base));
      return base;
    }
    for (let n = 2; ; n++) {
      const name = `${base}-${n}`;
      if (this.#reserved.has(key(name)) || this.#given.has(key(name))) continue;
      this.#given.add(key(name));
      return name;
    }
  }
}

/** A rule's name, given only where a policy targets single rules (GEP-713 sectionName). */
export function convertedRuleName(index: number): string {
  return `rule-${index}`;
}

/**
 * The HTTPS listener serving one `spec.tls` host: `https-` and the host with dots as dashes and a leading
 * `*` as `wildcard` (`*.foo.com` → `https-wildcard-foo-com`), and a number when two hosts give one name.
 */
export function tlsListenerName(host: string, taken: ReadonlySet<string>): string {
  const base = `https-${host.replace(/^\*/, "wildcard").replaceAll(".", "-")}`
    .slice(0, 240)
    .replace(/-+$/, "");
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
  return name;
}

/** The ReferenceGrant letting the Gateway read certificate Secrets of another namespace. */
export function certificateGrantName(gateway: { namespace: string; name: string }): string {
  return `gateway-${gateway.namespace}-${gateway.name}-certificates`;
}

/** The annotation on each HTTPRoute naming the Ingress (same namespace) it was converted from. */
export const SOURCE_ANNOTATION = "gatehouse.dev/converted-from-ingress";

/** The BackendTLSPolicy written for a Service port an Ingress spoke TLS to (`backend-protocol: HTTPS`…). */
export function backendTLSPolicyName(service: string, port: number): string {
  return `${service}-${port}-backend-tls`;
}

/** The ConfigMap holding that policy's CA (`ca.crt`, copied from the Ingress's `proxy-ssl-secret`). */
export function backendCAConfigMapName(service: string, port: number): string {
  return `${service}-${port}-backend-ca`;
}
