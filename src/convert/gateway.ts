/**
 * The Gateway that stands in for the Ingress listeners: `http` on the HTTP port, one HTTPS listener per
 * `spec.tls` host (listener hostname and certificate; Gateway API picks a listener's certificate by its
 * hostname), `https` without a hostname when `--default-certificate` gives a fallback, and ReferenceGrants
 * for certificate Secrets in other namespaces. With `--gateway NS/NAME` nothing is written and routes
 * attach to that Gateway's listeners named `http` and `https`.
 */
import type { Listener, SourceRef } from "../model/index.ts";
import type { Findings } from "./findings.ts";
import { hostMatches } from "./hosts.ts";
import {
  CONVERTED_GATEWAY,
  CONVERTED_GATEWAY_CLASS,
  certificateGrantName,
  HTTP_LISTENER,
  HTTPS_LISTENER,
  tlsListenerName,
} from "./names.ts";

type Json = Record<string, unknown>;

export interface GatewayRef {
  readonly namespace: string;
  readonly name: string;
}

export interface GatewayPlan {
  readonly ref: GatewayRef;
  /** The Gateway and ReferenceGrants to write (none with `--gateway`). */
  readonly objects: Json[];
  /** The listener (section) a host of a model listener is served on here; undefined: none serves it. */
  sectionFor(listener: Listener, hostname: string): string | undefined;
}

interface HttpsListener {
  readonly name: string;
  readonly hostname?: string;
  readonly secret: SourceRef;
}

export function planGateway(
  http: Listener | undefined,
  https: Listener | undefined,
  attachTo: GatewayRef | undefined,
  findings: Findings,
): GatewayPlan {
  if (attachTo !== undefined) {
    const gatewaySource = { kind: "Gateway", ...attachTo };
    if (https && (https.tls?.certificates.length ?? 0) > 0)
      findings.add(
        gatewaySource,
        `the HTTPS listener of Gateway ${attachTo.namespace}/${attachTo.name} must carry the certificates of spec.tls: ${[
          ...new Set(https.tls?.certificates.map((c) => `${c.source.namespace}/${c.source.name}`)),
        ].join(", ")}; routes attach to its listeners named "${HTTP_LISTENER}" and "${HTTPS_LISTENER}"`,
        "note",
      );
    return {
      ref: attachTo,
      objects: [],
      sectionFor: (l) => (l.protocol === "HTTP" ? HTTP_LISTENER : HTTPS_LISTENER),
    };
  }
  const ref = CONVERTED_GATEWAY;
  const tlsListeners: HttpsListener[] = [];
  let fallback: SourceRef | undefined;
  const taken = new Set<string>([HTTP_LISTENER, HTTPS_LISTENER]);
  for (const cert of https?.tls?.certificates ?? []) {
    if (cert.source.kind !== "Secret") continue;
    if (cert.hostnames.length === 0) fallback ??= cert.source;
    for (const host of cert.hostnames) {
      if (tlsListeners.some((l) => l.hostname === host)) continue;
      const name = tlsListenerName(host, taken);
      taken.add(name);
      tlsListeners.push({ name, hostname: host, secret: cert.source });
    }
    if (cert.ciphers !== undefined || cert.clientCAPem !== undefined)
      findings.add(
        { kind: "Gateway", ...ref },
        `the TLS settings of ${cert.hostnames.join(", ") || "the default certificate"} (${[
          cert.ciphers !== undefined ? "ssl-ciphers" : "",
          cert.clientCAPem !== undefined ? "auth-tls client certificates" : "",
        ]
          .filter(Boolean)
          .join(", ")}): not written on the listener`,
      );
  }
  const listeners: Json[] = [];
  const allowedRoutes = { namespaces: { from: "All" } };
  if (http) listeners.push({ name: HTTP_LISTENER, port: http.port, protocol: "HTTP", allowedRoutes });
  const httpsListeners: HttpsListener[] = [
    ...(fallback ? [{ name: HTTPS_LISTENER, secret: fallback }] : []),
    ...tlsListeners,
  ];
  for (const l of httpsListeners) {
    listeners.push({
      name: l.name,
      ...(l.hostname ? { hostname: l.hostname } : {}),
      port: https?.port,
      protocol: "HTTPS",
      tls: {
        mode: "Terminate",
        certificateRefs: [
          {
            kind: "Secret",
            name: l.secret.name,
            ...(l.secret.namespace !== ref.namespace ? { namespace: l.secret.namespace } : {}),
          },
        ],
      },
      allowedRoutes,
    });
  }
  const gateway = {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: ref.name, namespace: ref.namespace },
    spec: { gatewayClassName: CONVERTED_GATEWAY_CLASS, listeners },
  };
  return {
    ref,
    objects: [gateway, ...certificateGrants(ref, httpsListeners)],
    sectionFor(listener, hostname) {
      if (listener.protocol === "HTTP") return HTTP_LISTENER;
      // The listener a request for this host reaches: the most specific hostname that covers it.
      const covering = tlsListeners
        .filter((l) => l.hostname !== undefined && hostMatches(l.hostname, hostname))
        .sort((a, b) => (b.hostname?.length ?? 0) - (a.hostname?.length ?? 0));
      return covering[0]?.name ?? (fallback ? HTTPS_LISTENER : undefined);
    },
  };
}

function certificateGrants(ref: GatewayRef, listeners: readonly HttpsListener[]): Json[] {
  const byNamespace = new Map<string, Set<string>>();
  for (const l of listeners) {
    if (l.secret.namespace === ref.namespace) continue;
    const names = byNamespace.get(l.secret.namespace) ?? new Set<string>();
    names.add(l.secret.name);
    byNamespace.set(l.secret.namespace, names);
  }
  return [...byNamespace.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([namespace, names]) => ({
      apiVersion: "gateway.networking.k8s.io/v1beta1",
      kind: "ReferenceGrant",
      metadata: { name: certificateGrantName(ref), namespace },
      spec: {
        from: [{ group: "gateway.networking.k8s.io", kind: "Gateway", namespace: ref.namespace }],
        to: [...names].sort().map((name) => ({ group: "", kind: "Secret", name })),
      },
    }));
}
