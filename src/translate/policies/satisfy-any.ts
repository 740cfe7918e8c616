/**
 * `satisfy: Any` (AuthPolicy `spec.satisfy`, ingress-nginx `satisfy: any`; model `RouteAuth.satisfy`) means
 * something only where it meets both halves: authentication to stand in for, and an allow list to stand
 * in with. Where either is missing it changes nothing, and that is said once per policy or Ingress
 * (never silent), naming one route it has no effect on.
 */
import type { Problem, Route, SourceRef } from "../../model/index.ts";
import { problem } from "../common/problems.ts";

export const SATISFY_WITHOUT_EFFECT = "SatisfyWithoutEffect";

/** The placed routes' `satisfy: Any` that no allow list meets, gathered and reported once per source. */
export class SatisfyAnyCheck {
  private readonly told = new Set<string>();

  constructor(private readonly problems: Problem[]) {}

  /** `route` as it is served (its final auth and lists). */
  note(route: Route): void {
    const auth = route.auth;
    if (auth?.satisfy !== "Any" || auth.failClosed !== undefined) return;
    if (route.ipAccess?.some((l) => l.allow.length > 0)) return;
    this.tell(
      auth.policy,
      `satisfy Any has no effect on route ${route.name}: no allow list applies to it, so every request must authenticate`,
    );
  }

  /** A policy with address lists only: it has no credentials its addresses could stand in for. */
  listsOnly(policy: SourceRef): void {
    this.tell(
      policy,
      "spec.satisfy Any: this policy authenticates nothing, so its addresses stand in for no credentials; set satisfy on the policy that authenticates the routes",
    );
  }

  private tell(source: SourceRef, message: string): void {
    const key = `${source.kind}/${source.namespace}/${source.name}`;
    if (this.told.has(key)) return;
    this.told.add(key);
    this.problems.push(problem(source, SATISFY_WITHOUT_EFFECT, message, "warning"));
  }
}
