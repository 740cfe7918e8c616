/**
 * Never open for Ingress routes that are not served as their own: a canary's routes take the main
 * Ingress's settings, and a passed-through host is piped unopened, so neither can enforce an access
 * control asked for on that Ingress itself. This says which ones an Ingress asks for: the auth-policy
 * annotation, ingress-nginx `auth-type`, `auth-url`, `limit-*` and `global-rate-limit*` annotations, the `*-source-range` address lists,
 * `auth-tls-secret`, and
 * AuthPolicies or RateLimitPolicies whose targetRefs name it.
 */

import { AUTH_TLS_SECRET, NGINX_PREFIX } from "../../sources/nginx-references.ts";
import type { Ingress } from "../../sources/schema/networking.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import { annotationOf, arrayOf } from "../common/objects.ts";
import { sourceRangeKeys } from "./access/source-ranges.ts";
import { authPolicyAnnotation } from "./annotations/auth-policy.ts";
import { rateLimitAnnotationKinds } from "./annotations/request-rate.ts";

interface TargetingPolicy {
  readonly kind?: string;
  readonly metadata?: { readonly namespace?: string; readonly name?: string };
  readonly spec?: { readonly targetRefs?: readonly { readonly kind?: string; readonly name?: string }[] };
}

/** The access controls `ingress` asks for of its own, as words for a message; empty: none. */
export function ownGuards(ingress: Ingress, snapshot: ResourceSnapshot): string[] {
  const out: string[] = [];
  if (annotationOf(ingress, authPolicyAnnotation) !== undefined) out.push(authPolicyAnnotation);
  const basic = annotationOf(ingress, `${NGINX_PREFIX}auth-type`);
  if (basic !== undefined && basic.trim() !== "") out.push(`${NGINX_PREFIX}auth-type`);
  const forward = annotationOf(ingress, `${NGINX_PREFIX}auth-url`);
  if (forward !== undefined && forward.trim() !== "") out.push(`${NGINX_PREFIX}auth-url`);
  out.push(...rateLimitAnnotationKinds(ingress));
  out.push(...sourceRangeKeys(ingress));
  // Client certificates are a host's setting, which a canary cannot set (ingress-nginx skips it too).
  const authTLS = NGINX_PREFIX + AUTH_TLS_SECRET;
  if ((annotationOf(ingress, authTLS)?.trim() ?? "") !== "") out.push(authTLS);
  const ns = ingress.metadata?.namespace ?? "default";
  const name = ingress.metadata?.name;
  const targets = (p: TargetingPolicy) =>
    (p.metadata?.namespace ?? "default") === ns &&
    arrayOf(p.spec?.targetRefs).some((t) => t?.kind === "Ingress" && t.name === name);
  for (const p of arrayOf(snapshot?.authPolicies as readonly TargetingPolicy[]))
    if (targets(p)) out.push(`AuthPolicy ${ns}/${p.metadata?.name}`);
  for (const p of arrayOf(snapshot?.rateLimitPolicies as readonly TargetingPolicy[]))
    if (targets(p)) out.push(`RateLimitPolicy ${ns}/${p.metadata?.name}`);
  return out;
}
