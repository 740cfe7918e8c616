import type * as Yaml from "yaml";
import type { GatewayModel, Problem } from "./index.ts";
import { yamlText } from "./yaml-text.ts";

/** What `translate` returns, typed structurally so the model layer does not depend on translation. */
export interface DumpableResult {
  readonly model: GatewayModel;
  readonly problems: readonly Problem[];
  /** Object statuses (src/status/types.ts ObjectStatus), printed after the problems when there are any. */
  readonly statuses?: readonly unknown[];
}

export const redacted = "<redacted>";

/** Keys whose values are secret and never leave the process in a dump. */
/**
 * `clientSecret`/`sessionKey`: OIDC client credentials and the session-sealing key; `passwordHash`/`keyDigest`:
 * htpasswd hashes and API key digests (RouteAuth).
 */
const secretKeys = new Set(["keyPem", "clientSecret", "sessionKey", "passwordHash", "keyDigest"]);

/**
 * Keys printed first, in this order, so each map reads naturally (`kind, namespace, name`; a load problem
 * `file, document, object, …`); the rest follow alphabetically.
 */
const leadingKeys = [
  "target",
  "kind",
  "namespace",
  "name",
  "id",
  "hostname",
  "type",
  "status",
  "file",
  "document",
  "object",
  "reason",
  "severity",
];

/**
 * The model as YAML for `/debug/model`, `gatehouse translate` and golden files. Map keys in a fixed order
 * (leadingKeys, then alphabetical), so the text depends only on the content, not on how objects were
 * built; arrays kept in order (it is meaningful: routes are in precedence order); absent fields left
 * out; private keys redacted. Maps holding only scalars print on one line, to keep dumps reviewable.
 */
export function dumpModel(model: GatewayModel): string {
  return toYaml(model);
}

/**
 * `{ model, problems, statuses }` as YAML, for `gatehouse translate` and the golden tests. `statuses` is
 * left out when empty, so results with no Gateway API objects print as they always did.
 */
export function dumpTranslateResult(result: DumpableResult): string {
  const statuses = result.statuses ?? [];
  return toYaml({
    model: result.model,
    problems: result.problems,
    ...(statuses.length > 0 ? { statuses } : {}),
  });
}

/** Set for the test suite and conformance (test/setup.ts), as the translator's own self-checks are. */
const checkingText = process.env.GATEHOUSE_TRANSLATE_CHECK === "1";

function toYaml(value: unknown): string {
  const normalised = normalise(value);
  const text = yamlText(normalised);
  if (text === undefined) return yamlPackageText(normalised);
  if (checkingText && text !== yamlPackageText(normalised)) {
    const message = "yaml-text.ts printed a dump differently from the yaml package";
    console.error(message, JSON.stringify(normalised));
    throw new Error(message);
  }
  return text;
}

/** The reference printing (yaml-text.ts writes the same text without loading the package). */
export function yamlPackageText(normalised: unknown): string {
  const { Document, isCollection, isScalar, visit } = require("yaml") as typeof Yaml;
  // No aliases: a shared object (one SourceRef on many routes) must print in full at each place.
  const doc = new Document(normalised, { aliasDuplicateObjects: false });
  visit(doc, {
    Map(_, node) {
      const leafy = node.items.every(
        (pair) => isScalar(pair.value) || (isCollection(pair.value) && pair.value.items.length === 0),
      );
      if (leafy && node.items.length > 0) node.flow = true;
    },
  });
  return doc.toString({ lineWidth: 0 });
}

/** A copy with sorted keys, undefined fields dropped and secrets replaced. */
function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  const entries = Object.entries(value as Record<string, unknown>);
  entries.sort(([a], [b]) => compareKeys(a, b));
  for (const [key, v] of entries) {
    if (v === undefined) continue;
    out[key] = secretKeys.has(key) ? redacted : normalise(v);
  }
  return out;
}

function compareKeys(a: string, b: string): number {
  const ra = leadingKeys.indexOf(a);
  const rb = leadingKeys.indexOf(b);
  if (ra !== rb) return ra === -1 ? 1 : rb === -1 ? -1 : ra - rb;
  return a < b ? -1 : a > b ? 1 : 0;
}
