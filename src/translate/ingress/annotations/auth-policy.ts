/**
 * Gatehouse's own Ingress annotation `gatehouse.dev/auth-policy: NAME`: the Ingress asks for the
 * AuthPolicy NAME of its namespace, which then counts as a targetRef to the Ingress
 * (policies/auth-policy.ts). A name that matches no policy makes the Ingress's routes answer 401.
 */
import type { SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { annotationOf, sourceRef } from "../../common/objects.ts";

/** Ingress annotation naming an AuthPolicy in the Ingress's namespace. */
export const authPolicyAnnotation = "gatehouse.dev/auth-policy";

/** One Ingress that names an AuthPolicy. */
export interface AuthPolicyAnnotation {
  readonly ingress: SourceRef;
  /** The AuthPolicy's name, in the Ingress's namespace. */
  readonly policy: string;
}

/** The Ingresses (in the order given) whose annotation names a policy; blank values name none. */
export function authPolicyAnnotations(ingresses: readonly (Ingress | undefined)[]): AuthPolicyAnnotation[] {
  const out: AuthPolicyAnnotation[] = [];
  for (const ing of ingresses) {
    if (!ing?.metadata) continue;
    const policy = annotationOf(ing, authPolicyAnnotation)?.trim();
    if (policy) out.push({ ingress: sourceRef("Ingress", ing), policy });
  }
  return out;
}

/** What the Ingress is told when its annotation names no existing policy. */
export function missingAuthPolicyMessage(a: AuthPolicyAnnotation): string {
  return `annotation ${authPolicyAnnotation}: AuthPolicy ${a.ingress.namespace}/${a.policy} not found; the Ingress's routes answer 401 until it exists`;
}
