/**
 * Golden inputs as a snapshot: multi-document YAML, each document validated with the real schemas.
 * A document that fails validation becomes an `InvalidObject` problem, so bad-input cases show in
 * their .out.yaml what a user would be told, next to what was still served.
 */
import { parseAllDocuments } from "yaml";
import type { Problem } from "../../src/model/types.ts";
import { knownKinds, parseObject } from "../../src/sources/schema/index.ts";
import { emptySnapshotFields, type ResourceSnapshot } from "../../src/sources/snapshot.ts";

export interface LoadedCase {
  readonly snapshot: ResourceSnapshot;
  readonly problems: readonly Problem[];
}

export function loadCase(text: string): LoadedCase {
  const fields: Record<string, unknown[]> = emptySnapshotFields();
  const problems: Problem[] = [];
  parseAllDocuments(text).forEach((doc, i) => {
    if (doc.errors.length > 0) {
      const object = { kind: "", namespace: "", name: `document ${i}` };
      problems.push({
        object,
        reason: "InvalidObject",
        message: doc.errors[0]?.message ?? "",
        severity: "error",
      });
      return;
    }
    const raw = doc.toJS() as Record<string, unknown> | null;
    if (raw === null || raw === undefined) return;
    const parsed = parseObject(raw);
    if ("unknownKind" in parsed) {
      const object = refOf(raw);
      const message = `kind "${parsed.unknownKind}" is not read by Gatehouse; ignored`;
      problems.push({ object, reason: "InvalidObject", message, severity: "warning" });
    } else if (!parsed.ok) {
      problems.push({
        object: refOf(raw),
        reason: "InvalidObject",
        message: parsed.reason,
        severity: "error",
      });
    } else {
      fields[knownKinds[parsed.kind].field]?.push(parsed.object);
    }
  });
  return { snapshot: fields as unknown as ResourceSnapshot, problems };
}

function refOf(raw: Record<string, unknown>): Problem["object"] {
  const meta = (raw.metadata ?? {}) as Record<string, unknown>;
  const kind = typeof raw.kind === "string" ? raw.kind : "";
  const clusterScoped = kind === "IngressClass" || kind === "GatewayClass" || kind === "Namespace";
  const ns = typeof meta.namespace === "string" ? meta.namespace : clusterScoped ? "" : "default";
  return { kind, namespace: ns, name: typeof meta.name === "string" ? meta.name : "" };
}
