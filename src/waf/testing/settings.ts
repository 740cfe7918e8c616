/** A route's WAF for tests and the soak bench: the OWASP CRS enforced at paranoia 1, CRS's own thresholds. */
import type { RouteWaf } from "../../model/index.ts";

/** The WAF of Ingress `namespace/name`, enforcing the CRS with its defaults (128 KiB bodies, 255 args). */
export function enforcedCrs(namespace: string, name: string): RouteWaf {
  return {
    source: { kind: "Ingress", namespace, name },
    policy: `ingress/${namespace}/${name}`,
    mode: "Enforce",
    coreRuleSet: true,
    paranoiaLevel: 1,
    inboundAnomalyThreshold: 5,
    excludedRuleIds: [],
    excludedRuleTags: [],
    requestBodyLimitBytes: 131072,
    requestBodyOverLimit: "Reject",
    maxArguments: 255,
  };
}
