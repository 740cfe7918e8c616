/**
 * ingress-nginx `backend-protocol` as Gateway API: an Ingress's own variants of its backends (the model's
 * `…/tls/ingress/<ns>/<name>` and `…/h2c` backends) become what Gateway API sets per Service port.
 * - TLS (HTTPS, GRPCS, AUTO_HTTP): a BackendTLSPolicy for the Service port, `validation.hostname` the name
 *   verified, the CA in a ConfigMap written beside it (`ca.crt`, the Secret's `ca.crt`: a CA certificate is
 *   not secret) or `wellKnownCACertificates: System` for the public roots. It applies to every route to the
 *   port, so an Ingress (or the HTTP half of an AUTO_HTTP one) that spoke cleartext to it is told so, and a
 *   second Ingress asking other TLS of the same port is a finding, not a second policy;
 * - what a BackendTLSPolicy cannot say (the client certificate, TLS versions, HTTP/2 inside TLS) and h2c
 *   (GRPC, H2C: the Service port's appProtocol `kubernetes.io/h2c`, which convert does not edit) are
 *   findings; nothing is dropped without one.
 */
import type { Backend, GatewayModel, Listener, SourceRef } from "../model/index.ts";
import type { ResourceSnapshot } from "../sources/snapshot.ts";
import { arrayOf, nameOf, namespaceOf } from "../translate/common/objects.ts";
import { compareStrings } from "../translate/common/sort.ts";
import type { Findings } from "./findings.ts";
import { backendCAConfigMapName, backendTLSPolicyName } from "./names.ts";

type Json = Record<string, unknown>;

interface PortUse {
  readonly service: Backend["service"];
  /** TLS asked for, per Ingress (`ns/name`): its variant backend. */
  readonly tls: Map<string, { ingress: SourceRef; backend: Backend }>;
  /** Ingresses whose routes reach the port without TLS. */
  readonly plain: Map<string, SourceRef>;
}

const key = (r: SourceRef) => `${r.namespace}/${r.name}`;

export function convertBackendProtocols(
  model: GatewayModel,
  listeners: readonly Listener[],
  snapshot: ResourceSnapshot,
  findings: Findings,
): Json[] {
  const ports = new Map<string, PortUse>();
  const use = (b: Backend): PortUse => {
    const k = `${b.service.namespace}/${b.service.name}:${b.service.port}`;
    const found = ports.get(k) ?? { service: b.service, tls: new Map(), plain: new Map() };
    ports.set(k, found);
    return found;
  };
  for (const vh of listeners.flatMap((l) => l.virtualHosts))
    for (const r of vh.routes) {
      if (r.source.kind !== "Ingress" || r.action.kind !== "Forward") continue;
      for (const wb of r.action.backends) {
        const b = model.backends[wb.backendId];
        if (b === undefined || wb.failStatus !== undefined) continue;
        if (b.tls?.source.kind === "Ingress")
          use(b).tls.set(key(b.tls.source), { ingress: b.tls.source, backend: b });
        else if (wb.backendId.endsWith("/h2c") && b.protocol === "h2c") h2cFinding(r.source, b, findings);
        else use(b).plain.set(key(r.source), r.source);
      }
    }
  const objects: Json[] = [];
  for (const [, port] of [...ports].sort(([a], [b]) => compareStrings(a, b))) {
    if (port.tls.size === 0) continue;
    const asked = [...port.tls.values()].sort((a, b) => compareStrings(key(a.ingress), key(b.ingress)));
    const usable = asked.filter((t) => t.backend.problem !== "InvalidBackendTLS");
    for (const t of asked.filter((t) => !usable.includes(t)))
      findings.add(
        t.ingress,
        `TLS to ${portText(port)} could not be set up (its paths answer 503): no BackendTLSPolicy written`,
      );
    const first = usable[0];
    if (first === undefined) continue;
    const written = policyObjects(port, first.backend, snapshot);
    objects.push(...written.objects);
    for (const t of usable) {
      tlsFindings(t.ingress, t.backend, port, findings);
      if (t === first) findings.add(t.ingress, `${written.said}`, "note");
      else if (sameTLS(t.backend, first.backend))
        findings.add(
          t.ingress,
          `TLS to ${portText(port)}: the BackendTLSPolicy ${written.name} written for Ingress ${key(first.ingress)} says the same`,
          "note",
        );
      else
        findings.add(
          t.ingress,
          `TLS to ${portText(port)} (name ${t.backend.tls?.serverName}): BackendTLSPolicy ${written.name}, written for Ingress ${key(first.ingress)}, sets other TLS for the port (one policy per Service port); not written`,
        );
    }
    for (const ingress of port.plain.values())
      findings.add(
        ingress,
        `its routes to ${portText(port)} spoke ${port.tls.has(key(ingress)) ? "cleartext on the HTTP listener (AUTO_HTTP)" : "cleartext"}; BackendTLSPolicy ${written.name} (for Ingress ${key(first.ingress)}) makes every route to that port speak TLS`,
      );
  }
  return objects;
}

function portText(port: PortUse): string {
  return `Service ${port.service.namespace}/${port.service.name} port ${port.service.port}`;
}

function sameTLS(a: Backend, b: Backend): boolean {
  return a.tls?.serverName === b.tls?.serverName && a.tls?.caPem === b.tls?.caPem;
}

function h2cFinding(ingress: SourceRef, b: Backend, findings: Findings): void {
  findings.add(
    ingress,
    `backend-protocol GRPC/H2C: Service ${b.service.namespace}/${b.service.name} port ${b.service.port} is spoken to with h2c; an HTTPRoute speaks HTTP/1.1 to it unless the Service port has appProtocol kubernetes.io/h2c (set it; for gRPC a GRPCRoute is Gateway API's form); not written`,
  );
}

/** What a BackendTLSPolicy cannot carry of this Ingress's TLS. */
function tlsFindings(ingress: SourceRef, b: Backend, port: PortUse, findings: Findings): void {
  const tls = b.tls;
  if (tls === undefined) return;
  if (tls.clientCertificate !== undefined)
    findings.add(
      ingress,
      `the client certificate of proxy-ssl-secret for ${portText(port)}: Gateway API presents one per Gateway (spec.tls.backend.clientCertificateRef, a Secret with tls.crt and tls.key); not written`,
    );
  if (tls.versions !== undefined)
    findings.add(
      ingress,
      `proxy-ssl-protocols (${tls.versions.min}–${tls.versions.max}) for ${portText(port)}: a BackendTLSPolicy sets no TLS versions; not written`,
    );
  if (b.protocol === "h2c")
    findings.add(
      ingress,
      `backend-protocol GRPCS: HTTP/2 over TLS to ${portText(port)}; an HTTPRoute speaks HTTP/1.1 over TLS (for gRPC a GRPCRoute is Gateway API's form); not written`,
    );
}

/** The BackendTLSPolicy (and CA ConfigMap) for one Service port, from the TLS of `b`. */
function policyObjects(
  port: PortUse,
  b: Backend,
  snapshot: ResourceSnapshot,
): { objects: Json[]; name: string; said: string } {
  const { namespace, name: service, port: number } = port.service;
  const tls = b.tls as NonNullable<Backend["tls"]>;
  const name = backendTLSPolicyName(service, number);
  const portName = arrayOf(
    arrayOf(snapshot.services).find((s) => namespaceOf(s) === namespace && nameOf(s) === service)?.spec
      ?.ports,
  ).find((p) => p.port === number && (p.protocol ?? "TCP") === "TCP")?.name;
  const objects: Json[] = [];
  let ca: Json = { wellKnownCACertificates: "System" };
  let caText = "the public root CAs (wellKnownCACertificates: System)";
  if (tls.caPem !== undefined) {
    const configMap = backendCAConfigMapName(service, number);
    objects.push({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: configMap, namespace },
      data: { "ca.crt": tls.caPem },
    });
    ca = { caCertificateRefs: [{ group: "", kind: "ConfigMap", name: configMap }] };
    caText = `the CA of proxy-ssl-secret's ca.crt, copied into ConfigMap ${namespace}/${configMap}`;
  }
  objects.push({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "BackendTLSPolicy",
    metadata: { name, namespace },
    spec: {
      targetRefs: [
        { group: "", kind: "Service", name: service, ...(portName ? { sectionName: portName } : {}) },
      ],
      validation: { hostname: tls.serverName, ...ca },
    },
  });
  const said = `TLS to ${portText(port)}: BackendTLSPolicy ${namespace}/${name} verifies ${tls.serverName} against ${caText}${portName ? "" : " (the port has no name: the policy targets the whole Service)"}`;
  return { objects, name: `${namespace}/${name}`, said };
}
