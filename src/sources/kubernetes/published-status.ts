import type { ObjectStatus } from "../../status/types.ts";
import type { Ingress } from "../schema/networking.ts";

/** One address clients reach the gateway at, in the `LoadBalancerIngress` shape. */
export interface PublishedAddress {
  readonly ip?: string;
  readonly hostname?: string;
}

const ipLike = /^[0-9.]+$|:/;

/**
 * Where clients reach the fleet: `--status-address` values when given (IPs or host names), else the
 * `--publish-service` Service's `status.loadBalancer.ingress`, else its `spec.externalIPs`, else its
 * cluster IP (a ClusterIP Service is still an address, inside the cluster). Empty when nothing is known.
 */
export function publishedAddresses(statusAddresses: readonly string[], service: unknown): PublishedAddress[] {
  if (statusAddresses.length)
    return statusAddresses.map((a) => (ipLike.test(a) ? { ip: a } : { hostname: a }));
  const svc = (service ?? {}) as {
    spec?: { externalIPs?: string[]; clusterIP?: string };
    status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
  };
  const lb = (svc.status?.loadBalancer?.ingress ?? []).flatMap((i): PublishedAddress[] =>
    i.ip ? [{ ip: i.ip }] : i.hostname ? [{ hostname: i.hostname }] : [],
  );
  if (lb.length) return lb;
  if (svc.spec?.externalIPs?.length) return svc.spec.externalIPs.map((ip) => ({ ip }));
  const cip = svc.spec?.clusterIP;
  return cip && cip !== "None" ? [{ ip: cip }] : [];
}

/**
 * Translation's statuses completed for a cluster: a Gateway translation gave no address (no pool, no
 * `spec.addresses`) gets the published addresses in `status.addresses`; each Ingress of ours gets them
 * in `status.loadBalancer.ingress`.
 */
export function clusterStatuses(
  statuses: readonly ObjectStatus[],
  ourIngresses: readonly Ingress[],
  addresses: readonly PublishedAddress[],
): ObjectStatus[] {
  const gatewayAddresses = addresses.map((a) =>
    a.ip ? { type: "IPAddress", value: a.ip } : { type: "Hostname", value: a.hostname as string },
  );
  const out = statuses.map((s) => {
    const current = (s.status as { addresses?: unknown[] }).addresses;
    if (s.target.kind !== "Gateway" || (current && current.length > 0)) return s;
    return { ...s, status: { ...s.status, addresses: gatewayAddresses } };
  });
  for (const ing of ourIngresses) {
    out.push({
      target: {
        group: "networking.k8s.io",
        kind: "Ingress",
        namespace: ing.metadata.namespace ?? "default",
        name: ing.metadata.name,
      },
      status: { loadBalancer: { ingress: addresses.map((a) => ({ ...a })) } },
    });
  }
  return out;
}
