import type * as Yaml from "yaml";
import {
  isKnownKind,
  type KnownKind,
  parseObject,
  refusedStandIn,
  unknownFieldsWarning,
} from "../schema/index.ts";
import { nativeDocuments } from "./native-yaml.ts";

/**
 * Kinds without a namespace. Everything else we read is namespaced and gets `default` when the YAML
 * leaves the namespace out, as `kubectl apply` would.
 */
export const clusterScopedKinds: ReadonlySet<string> = new Set(["IngressClass", "GatewayClass", "Namespace"]);

/** One validated object of a file, with the identity duplicates and last-good fallbacks are keyed on. */
export interface Entry {
  readonly kind: KnownKind;
  /** `kind/namespace/name` (namespace empty for cluster-scoped kinds). */
  readonly key: string;
  /** `namespace/name`, or `name` for cluster-scoped kinds: how errors and logs name the object. */
  readonly name: string;
  readonly docIndex: number;
  readonly object: unknown;
  /**
   * Fields the object has and Gatehouse does not read (Gateway API kinds only, whose schemas let them
   * through), as the `UnknownField` warning words them. Kept with the entry, so an object that keeps
   * serving from the last good version of its file keeps its warning too.
   */
  readonly unknownFields?: string;
}

/** One document (or `List` item) that could not be used. `key` is set when kind and name were readable. */
export interface DocProblem {
  readonly docIndex: number;
  readonly kind?: string;
  readonly name?: string;
  readonly key?: string;
  readonly reason: string;
}

/** What one file's text holds; `syntaxError` set means the file as a whole is unusable. */
export interface FileParse {
  readonly syntaxError?: string;
  readonly entries: readonly Entry[];
  readonly problems: readonly DocProblem[];
  readonly skipped: readonly SkippedDoc[];
}

/** A document of a kind Gatehouse does not read, with what it says of itself. */
export interface SkippedDoc {
  readonly docIndex: number;
  readonly kind: string;
  readonly apiVersion?: string;
  /** `metadata.namespace`, "" when absent (the kind's scope is unknown, so no default is assumed). */
  readonly namespace: string;
  readonly name: string;
}

/**
 * Parse the text of one YAML file: every document (empty ones skipped; `kind: List` expanded into its
 * `items`) validated with the schemas. A YAML syntax error anywhere makes the whole file unusable, so a
 * half-saved file never serves half its objects.
 */
export function parseFileText(text: string): FileParse {
  const read = readDocuments(text);
  if ("syntaxError" in read) return { syntaxError: read.syntaxError, ...none };
  const entries: Entry[] = [];
  const problems: DocProblem[] = [];
  const skipped: SkippedDoc[] = [];
  const strings = new Map<string, string>();
  for (const [docIndex, raw] of read.documents.entries()) {
    if (raw === null || raw === undefined) continue;
    const rec = raw as Record<string, unknown>;
    const items = isObject(raw) && rec.kind === "List" ? rec.items : undefined;
    if (isObject(raw) && rec.kind === "List" && !Array.isArray(items)) {
      problems.push({ docIndex, kind: "List", reason: "items: a List needs an array of items" });
      continue;
    }
    const objects = Array.isArray(items)
      ? items.map((o, i) => [o, `items[${i}]: `] as const)
      : [[raw, ""] as const];
    for (const [object, where] of objects) {
      const result = validate(object);
      if ("entry" in result) shareStrings(result.entry.object, strings);
      if ("skipped" in result) skipped.push({ docIndex, ...result.skipped });
      else if ("problem" in result) {
        problems.push({ docIndex, ...result.problem, reason: where + result.problem.reason });
        if (result.standIn !== undefined) entries.push({ docIndex, ...result.standIn });
      } else entries.push({ docIndex, ...result.entry });
    }
  }
  return { entries, problems, skipped };
}

const none = { entries: [], problems: [], skipped: [] } as const;

/**
 * Equal strings of one file's objects made one string, in place (the objects are the schemas' fresh
 * output, not yet shared). The YAML parser gives every scalar its own string, and a served object lives
 * as long as its file is unchanged: at 10k routes, 39k strings held 2.6k distinct values (`Prefix`,
 * `backend`, `/p0`… once per route).
 */
function shareStrings(value: unknown, strings: Map<string, string>): void {
  if (typeof value !== "object" || value === null) return;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const v = record[key];
    if (typeof v === "string") {
      const kept = strings.get(v);
      if (kept === undefined) strings.set(v, v);
      else record[key] = kept;
    } else if (typeof v === "object" && v !== null) shareStrings(v, strings);
  }
}

/** Set for the test suite and conformance (test/setup.ts), as the translator's own self-checks are. */
const checkingNative = process.env.GATEHOUSE_TRANSLATE_CHECK === "1";

/**
 * The value of each document of a file (undefined or null: empty), or why the file is not YAML. Bun's
 * native parser where native-yaml.ts vouches for it, else the yaml package, loaded only then (it is a
 * third of `gatehouse translate`'s start). Under GATEHOUSE_TRANSLATE_CHECK every native read is
 * compared with the yaml package's.
 */
function readDocuments(text: string): { documents: readonly unknown[] } | { syntaxError: string } {
  const native = nativeDocuments(text);
  if (native === undefined) return yamlPackageDocuments(text);
  if (checkingNative) {
    const reference = yamlPackageDocuments(text);
    const same = "documents" in reference && reference.documents.length === native.length;
    if (!same || !reference.documents.every((d, i) => Bun.deepEquals(d ?? null, native[i], true))) {
      const message = "Bun.YAML read a file differently from the yaml package";
      console.error(message, JSON.stringify(text));
      throw new Error(message);
    }
  }
  return { documents: native };
}

/** The yaml package's reading: its error messages, and an alias limit that refuses "billion laughs". */
export function yamlPackageDocuments(text: string): { documents: unknown[] } | { syntaxError: string } {
  const { parseAllDocuments } = require("yaml") as typeof Yaml;
  const docs = parseAllDocuments(text, { prettyErrors: true });
  for (const [i, doc] of docs.entries()) {
    const err = doc.errors[0];
    if (err) return { syntaxError: `YAML syntax error in document ${i}: ${firstLine(err.message)}` };
  }
  const documents: unknown[] = [];
  for (const [i, doc] of docs.entries()) {
    try {
      // A low alias limit refuses "billion laughs" documents instead of expanding them.
      documents.push(doc.contents === null ? undefined : doc.toJS({ maxAliasCount: 100 }));
    } catch (err) {
      return { syntaxError: `YAML error in document ${i}: ${firstLine((err as Error).message)}` };
    }
  }
  return { documents };
}

type Validated =
  | { readonly entry: Omit<Entry, "docIndex"> }
  | {
      readonly problem: Omit<DocProblem, "docIndex">;
      /** Served in place of a refused object whose absence would open a guard (refusedStandIn). */
      readonly standIn?: Omit<Entry, "docIndex">;
    }
  | { readonly skipped: Omit<SkippedDoc, "docIndex"> };

function validate(raw: unknown): Validated {
  if (!isObject(raw)) return { problem: { reason: "(root): not a Kubernetes object (expected a mapping)" } };
  const kind = raw.kind;
  if (typeof kind !== "string" || kind === "") return { problem: { reason: "kind: missing" } };
  if (!isKnownKind(kind)) return { skipped: skippedIdentity(kind, raw) };
  const id = identity(kind, raw.metadata);
  const parsed = parseObject(raw);
  if (!parsed.ok) {
    const problem = { kind, ...id, reason: "reason" in parsed ? parsed.reason : "invalid" };
    const standIn = refusedStandIn(kind, raw, problem.reason);
    if (standIn === undefined) return { problem };
    const object = withDefaultNamespace(kind, standIn);
    return { problem, standIn: { kind, key: id.key ?? "", name: id.name ?? "", object } };
  }
  const unknownFields = unknownFieldsWarning(kind, raw);
  return {
    entry: {
      kind,
      key: id.key ?? "",
      name: id.name ?? "",
      object: withDefaultNamespace(kind, parsed.object),
      ...(unknownFields === undefined ? {} : { unknownFields }),
    },
  };
}

function skippedIdentity(kind: string, raw: Record<string, unknown>): Omit<SkippedDoc, "docIndex"> {
  const meta = isObject(raw.metadata) ? raw.metadata : {};
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  return {
    kind,
    ...(typeof raw.apiVersion === "string" ? { apiVersion: raw.apiVersion } : {}),
    namespace: str(meta.namespace),
    name: str(meta.name),
  };
}

/** Display name and key of an object from its raw metadata, when it has a name. */
function identity(kind: string, metadata: unknown): { name?: string; key?: string } {
  if (!isObject(metadata) || typeof metadata.name !== "string" || metadata.name === "") return {};
  if (clusterScopedKinds.has(kind)) return { name: metadata.name, key: `${kind}//${metadata.name}` };
  const ns =
    typeof metadata.namespace === "string" && metadata.namespace !== "" ? metadata.namespace : "default";
  return { name: `${ns}/${metadata.name}`, key: `${kind}/${ns}/${metadata.name}` };
}

function withDefaultNamespace(kind: string, object: unknown): unknown {
  const rec = object as { metadata: { namespace?: string } };
  if (clusterScopedKinds.has(kind) || rec.metadata.namespace) return object;
  return { ...rec, metadata: { ...rec.metadata, namespace: "default" } };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The yaml package's messages end in a code frame; the first line has what and where. */
function firstLine(message: string): string {
  return (message.split("\n")[0] ?? message).replace(/:$/, "");
}
