/**
 * The `.status` of a GEP-713 policy: one PolicyAncestorStatus per target with an `Accepted` condition
 * (reasons Accepted, Conflicted, Invalid, TargetNotFound). Generic over the policy kind.
 */
import type { Problem, SourceRef } from "../../model/index.ts";
import { condition } from "../../status/conditions.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { problem } from "../common/problems.ts";
import type { AncestorResult } from "./policy-attachment.ts";

export interface PolicyStatusInput {
  readonly group: string;
  readonly ref: SourceRef;
  readonly generation: number | undefined;
  readonly controllerName: string;
  readonly ancestors: readonly AncestorResult[];
  /** Set when the policy's own spec is unusable: found targets then say Invalid with this message. */
  readonly invalid?: string;
}

/** At most 16 ancestors, as the Gateway API bounds PolicyStatus.ancestors. */
const maxAncestors = 16;

export function policyStatus(input: PolicyStatusInput): ObjectStatus {
  const ancestors = input.ancestors.slice(0, maxAncestors).map((a) => {
    const invalid = a.outcome === "Accepted" && input.invalid !== undefined;
    const reason = invalid ? "Invalid" : a.outcome;
    const message = invalid ? (input.invalid as string) : a.message;
    return {
      ancestorRef: a.ancestorRef,
      controllerName: input.controllerName,
      conditions: [condition("Accepted", reason === "Accepted", reason, message, input.generation)],
    };
  });
  return {
    target: {
      group: input.group,
      kind: input.ref.kind,
      namespace: input.ref.namespace,
      name: input.ref.name,
    },
    ...(input.generation !== undefined ? { generation: input.generation } : {}),
    status: { ancestors },
  };
}

/** Problems for a policy status: errors for Invalid and TargetNotFound, warnings for Conflicted. */
export function policyProblems(input: PolicyStatusInput): Problem[] {
  const out: Problem[] = [];
  if (input.invalid !== undefined) out.push(problem(input.ref, "Invalid", input.invalid));
  for (const a of input.ancestors) {
    if (a.outcome === "Accepted") continue;
    const r = a.ancestorRef;
    const where = `${r.kind} ${r.namespace}/${r.name}${r.sectionName !== undefined ? `#${r.sectionName}` : ""}`;
    const severity = a.outcome === "Conflicted" ? "warning" : "error";
    out.push(problem(input.ref, a.outcome, `target ${where}: ${a.message}`, severity));
  }
  return out;
}
