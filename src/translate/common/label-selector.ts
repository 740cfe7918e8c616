import type { LabelSelector, Namespace } from "../../sources/schema/gateway.ts";
import { arrayOf, nameOf } from "./objects.ts";

export const namespaceNameLabel = "kubernetes.io/metadata.name";

/**
 * Labels of every namespace by name. A namespace with no Namespace object in the snapshot (folder mode
 * rarely has them) still has `kubernetes.io/metadata.name`, which Kubernetes ≥ 1.22 sets on every
 * namespace; that label is forced to the real name even when a Namespace object says otherwise.
 */
export function namespaceLabels(
  namespaces: readonly Namespace[],
): (ns: string) => Readonly<Record<string, string>> {
  const byName = new Map<string, Readonly<Record<string, string>>>();
  for (const n of arrayOf(namespaces)) {
    const name = nameOf(n);
    if (name) byName.set(name, { ...(n.metadata?.labels ?? {}), [namespaceNameLabel]: name });
  }
  return (ns) => byName.get(ns) ?? { [namespaceNameLabel]: ns };
}

/**
 * Whether labels satisfy a metav1.LabelSelector: every matchLabels entry, and every matchExpressions
 * entry (In, NotIn, Exists, DoesNotExist). An empty selector matches everything, as in Kubernetes.
 * A malformed expression (unknown operator, In/NotIn without values, Exists with values) matches nothing,
 * and is reported by `selectorProblem`.
 */
export function matchesSelector(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const expr of arrayOf(selector.matchExpressions)) {
    const has = Object.hasOwn(labels, expr.key);
    const values = arrayOf(expr.values);
    switch (expr.operator) {
      case "In":
        if (values.length === 0 || !has || !values.includes(labels[expr.key] as string)) return false;
        break;
      case "NotIn":
        if (values.length === 0 || (has && values.includes(labels[expr.key] as string))) return false;
        break;
      case "Exists":
        if (values.length > 0 || !has) return false;
        break;
      case "DoesNotExist":
        if (values.length > 0 || has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** Why a selector is malformed, or undefined. */
export function selectorProblem(selector: LabelSelector): string | undefined {
  for (const [i, expr] of arrayOf(selector.matchExpressions).entries()) {
    const n = arrayOf(expr.values).length;
    const where = `matchExpressions[${i}]`;
    if (expr.operator === "In" || expr.operator === "NotIn") {
      if (n === 0) return `${where}: operator ${expr.operator} needs values`;
    } else if (expr.operator === "Exists" || expr.operator === "DoesNotExist") {
      if (n > 0) return `${where}: operator ${expr.operator} takes no values`;
    } else {
      return `${where}: unknown operator "${expr.operator}"`;
    }
  }
  return undefined;
}
