/**
 * What a Gateway's `spec.infrastructure.labels` and `annotations` put on the objects Gatehouse creates for
 * it (the spec: they "SHOULD be applied to any resources created in response to this Gateway"). In a
 * cluster with `--gateway-services` that is its Service (sources/kubernetes/gateway-services.ts); folder
 * mode creates nothing, and the same record is shown with the Gateway's status at /debug/status. Built
 * here once for both, so what the Service gets and what /debug/status shows cannot differ.
 *
 * Refused, each with a warning (the entry is not propagated, the rest are): a key Gatehouse sets itself
 * with another value (our labels find and delete the Service; the spec reserves no key, so this is our
 * rule), and a key or value the CRD's validation refuses (a cluster's API server refuses such a Gateway;
 * in folder mode nothing else would say so), or a value that is not a string.
 */
import type { Problem } from "../../model/index.ts";
import type { Gateway } from "../../sources/schema/gateway.ts";
import type { InfrastructureMetadata, ObjectStatus } from "../../status/types.ts";
import { nameOf, namespaceOf, sourceRef } from "../common/objects.ts";
import { problem } from "../common/problems.ts";

/** The label the spec names for objects created for a Gateway (`gateway.networking.k8s.io/gateway-name`). */
export const standardGatewayNameLabel = "gateway.networking.k8s.io/gateway-name";
export const managedByLabel = "app.kubernetes.io/managed-by";
export const gatewayNamespaceLabel = "gatehouse.dev/gateway-namespace";
export const gatewayNameLabel = "gatehouse.dev/gateway-name";
/** The annotation keys we set from `spec.infrastructure.annotations` (comma-separated), to remove them later. */
export const managedAnnotationsKey = "gatehouse.dev/infrastructure-annotations";

/** The labels Gatehouse puts on every object it creates for a Gateway. */
function ownLabels(gw: Gateway): Record<string, string> {
  return {
    [managedByLabel]: "gatehouse",
    [standardGatewayNameLabel]: nameOf(gw),
    [gatewayNamespaceLabel]: namespaceOf(gw),
    [gatewayNameLabel]: nameOf(gw),
  };
}

// The CRD's LabelKey/AnnotationKey, LabelValue and AnnotationValue rules; anchored, no nested repetition.
const dnsLabel = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;
const keyName = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const labelValue = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const maxAnnotationValue = 4096;

/** Why `key` is not a valid label or annotation key; undefined when it is. */
function keyProblem(key: string): string | undefined {
  if (key.length === 0 || key.length > 253) return "a key has 1 to 253 characters";
  const slash = key.indexOf("/");
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  if (prefix !== undefined && (prefix.length >= 253 || !prefix.split(".").every((p) => dnsLabel.test(p))))
    return "the prefix before '/' must be a DNS subdomain (lower case) under 253 characters";
  if (!keyName.test(slash < 0 ? key : key.slice(slash + 1)))
    return "the name must have 1 to 63 letters, digits, '-', '_' or '.', and begin and end with a letter or digit";
  return undefined;
}

type Field = "labels" | "annotations";

function valueProblem(field: Field, value: unknown): string | undefined {
  if (typeof value !== "string") return "the value is not a string";
  if (field === "labels" && !labelValue.test(value))
    return "a label value has at most 63 letters, digits, '-', '_' or '.', and begins and ends with a letter or digit";
  if (field === "annotations" && value.length > maxAnnotationValue)
    return `an annotation value has at most ${maxAnnotationValue} characters`;
  return undefined;
}

/** A map's entries that may go onto created objects, and why the others may not. */
function accepted(
  field: Field,
  given: unknown,
  reserved: Readonly<Record<string, string>>,
): { kept: Record<string, string>; refused: string[] } {
  const kept: Record<string, string> = {};
  const refused: string[] = [];
  if (given === undefined || given === null) return { kept, refused };
  if (typeof given !== "object" || Array.isArray(given))
    return { kept, refused: [`spec.infrastructure.${field} is not a map; nothing of it is propagated`] };
  for (const [key, value] of Object.entries(given as Record<string, unknown>)) {
    const at = `spec.infrastructure.${field}[${JSON.stringify(key)}]`;
    const why =
      keyProblem(key) ??
      valueProblem(field, value) ??
      (Object.hasOwn(reserved, key) && reserved[key] !== value
        ? `Gatehouse sets this key itself (to ${JSON.stringify(reserved[key])})`
        : undefined);
    if (why === undefined) kept[key] = value as string;
    else refused.push(`${at}: ${why}; not propagated to the objects created for this Gateway`);
  }
  return { kept, refused };
}

const sorted = (m: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * The Gateway's infrastructure metadata (keys sorted) and the reasons for each entry refused. The
 * bookkeeping annotation is always refused: its value is the list of the others' keys.
 */
export function infrastructureOf(gw: Gateway): { metadata: InfrastructureMetadata; refused: string[] } {
  const own = ownLabels(gw);
  const labels = accepted("labels", gw.spec?.infrastructure?.labels, own);
  const annotations = accepted("annotations", gw.spec?.infrastructure?.annotations, {});
  if (Object.hasOwn(annotations.kept, managedAnnotationsKey)) {
    delete annotations.kept[managedAnnotationsKey];
    annotations.refused.push(
      `spec.infrastructure.annotations[${JSON.stringify(managedAnnotationsKey)}]: Gatehouse keeps its own list of propagated annotations there; not propagated`,
    );
  }
  return {
    metadata: { labels: sorted({ ...labels.kept, ...own }), annotations: sorted(annotations.kept) },
    refused: [...labels.refused, ...annotations.refused],
  };
}

/** A warning for each `spec.infrastructure` entry not propagated (infrastructureOf). */
export function infrastructureProblems(gw: Gateway): Problem[] {
  return infrastructureOf(gw).refused.map((why) =>
    problem(sourceRef("Gateway", gw), "UnsupportedValue", why, "warning"),
  );
}

/**
 * `statuses` with each Gateway's infrastructure record, for /debug/status (the status writer reads only
 * `.status`, so none of it reaches the API). Gateways without a status are not ours and get none.
 */
export function withInfrastructure(
  statuses: readonly ObjectStatus[],
  gateways: readonly Gateway[],
): ObjectStatus[] {
  const byKey = new Map(gateways.map((g) => [`${namespaceOf(g)}/${nameOf(g)}`, g]));
  return statuses.map((s) => {
    if (s.target.kind !== "Gateway") return s;
    const gw = byKey.get(`${s.target.namespace}/${s.target.name}`);
    return gw ? { ...s, infrastructure: infrastructureOf(gw).metadata } : s;
  });
}
