/**
 * ingress-nginx `ssl-passthrough` as Gateway API: one TLS listener (mode Passthrough) per passed-through
 * host on the HTTPS port, and one TLSRoute per Ingress naming those hosts and its backends. Gatehouse's
 * Gateway cannot share a port between TLS Passthrough and HTTPS listeners (ProtocolConflict), so when the
 * same Ingress set also terminates TLS, or routes attach to a Gateway `--gateway` names, the passthrough
 * hosts are a finding instead.
 */
import type { GatewayModel, SNIRoute, SourceRef } from "../model/index.ts";
import { DEFAULT_PASSTHROUGH_LISTENER } from "../translate/common/names.ts";
import { compareStrings } from "../translate/common/sort.ts";
import { backendRefOf } from "./backend-refs.ts";
import type { Findings } from "./findings.ts";
import type { GatewayPlan } from "./gateway.ts";
import { NamePicker, SOURCE_ANNOTATION, tlsListenerName } from "./names.ts";

type Json = Record<string, unknown>;

/** The TLSRoutes, the TLS listeners added to the written Gateway, and the section of each host. */
export function convertPassthrough(
  model: GatewayModel,
  plan: GatewayPlan,
  findings: Findings,
  ingressNames: readonly string[],
): { routes: Json[]; sections: Map<string, string> } {
  const sections = new Map<string, string>();
  const listener = model.passthroughListeners?.find((l) => l.name === DEFAULT_PASSTHROUGH_LISTENER);
  const routes = (listener?.routes ?? []).filter((r) => r.source.kind === "Ingress");
  if (listener === undefined || routes.length === 0) return { routes: [], sections };
  const gateway = plan.objects.find((o) => o.kind === "Gateway") as
    | { spec: { listeners: Json[] } }
    | undefined;
  const terminating = gateway?.spec.listeners.some((l) => l.protocol === "HTTPS") ?? true;
  if (gateway === undefined || terminating) {
    for (const r of routes)
      findings.add(
        r.source,
        `ssl-passthrough of ${r.hostnames.map((h) => h.hostname).join(", ")}: ${
          gateway === undefined
            ? `give the Gateway ${plan.ref.namespace}/${plan.ref.name} a TLS Passthrough listener and a TLSRoute`
            : "a TLS Passthrough listener cannot share the HTTPS port with HTTPS listeners; not written"
        }`,
      );
    return { routes: [], sections };
  }
  const taken = new Set(gateway.spec.listeners.map((l) => l.name as string));
  for (const host of [...new Set(routes.flatMap((r) => r.hostnames.map((h) => h.hostname)))].sort(
    compareStrings,
  )) {
    const name = tlsListenerName(host, taken).replace(/^https-/, "tls-");
    taken.add(name);
    sections.set(host, name);
    gateway.spec.listeners.push({
      name,
      ...(host !== "*" ? { hostname: host } : {}),
      port: listener.port,
      protocol: "TLS",
      tls: { mode: "Passthrough" },
      allowedRoutes: { namespaces: { from: "All" } },
    });
  }
  const names = new NamePicker(ingressNames);
  const byIngress = new Map<string, { ingress: SourceRef; routes: SNIRoute[] }>();
  for (const r of routes) {
    const key = `${r.source.namespace}/${r.source.name}`;
    const e = byIngress.get(key) ?? { ingress: r.source, routes: [] };
    e.routes.push(r);
    byIngress.set(key, e);
  }
  const out: Json[] = [];
  for (const { ingress, routes: own } of [...byIngress.values()].sort((a, b) =>
    compareStrings(`${a.ingress.namespace}/${a.ingress.name}`, `${b.ingress.namespace}/${b.ingress.name}`),
  )) {
    for (const r of own) {
      const hosts = r.hostnames.map((h) => h.hostname).filter((h) => h !== "*");
      const backendRefs: Json[] = [];
      for (const b of r.backends) {
        const ref = b.refused
          ? `backend ${b.backendId} is refused`
          : backendRefOf(b.backendId, model, ingress.namespace);
        if (typeof ref === "string") findings.add(ingress, `ssl-passthrough: ${ref}; not written`);
        else backendRefs.push({ ...ref, ...(r.backends.length > 1 ? { weight: b.weight } : {}) });
      }
      out.push({
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "TLSRoute",
        metadata: {
          name: names.pick(ingress.namespace, ingress.name, out.length === 0 || !sameIngress(out, ingress)),
          namespace: ingress.namespace,
          annotations: { [SOURCE_ANNOTATION]: ingress.name },
        },
        spec: {
          parentRefs: r.hostnames.map((h) => ({
            name: plan.ref.name,
            ...(plan.ref.namespace !== ingress.namespace ? { namespace: plan.ref.namespace } : {}),
            sectionName: sections.get(h.hostname),
          })),
          ...(hosts.length > 0 ? { hostnames: hosts } : {}),
          rules: [{ backendRefs }],
        },
      });
    }
  }
  return { routes: out, sections };
}

function sameIngress(written: readonly Json[], ingress: SourceRef): boolean {
  return written.some((o) => {
    const meta = o.metadata as { namespace: string; annotations: Record<string, string> };
    return meta.namespace === ingress.namespace && meta.annotations[SOURCE_ANNOTATION] === ingress.name;
  });
}
