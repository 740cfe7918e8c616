/**
 * Fields of an input that its zod schema does not declare, found by walking the schema's shape next to
 * the value. For the lenient Gateway API schemas (gateway.ts, tlsroute.ts): they let unknown fields
 * through so that a field of a newer or experimental version does not get a whole object refused, and
 * this walk is what keeps a misspelt field (`spec.listners`) from being ignored without a word.
 *
 * Only what the schema describes is walked (objects, arrays, records, optional/nullable/default wrappers,
 * unions), so the depth is the schema's, never the input's; `z.unknown()` stops the walk (whatever is
 * under it is not ours to judge), and so does an object marked with `openObject` (ObjectMeta: the API
 * server adds fields there). The number of paths kept is capped; the rest are only counted.
 */
import type { z } from "zod";

/** Objects whose extra keys are expected (not reported): see `openObject`. */
const openObjects = new WeakSet<object>();

/** Mark an object schema whose extra keys are expected, e.g. ObjectMeta's `uid`, `managedFields`. */
export function openObject<S extends z.ZodType>(schema: S): S {
  openObjects.add(schema);
  return schema;
}

/** What `unknownFields` found: at most `limit` paths, in input order, and how many more there were. */
export interface UnknownFields {
  readonly paths: readonly string[];
  readonly more: number;
}

/** The default cap on paths kept per object. */
export const unknownFieldLimit = 10;

/** Longest key shown in a path; a longer one is cut (hostile input must not make huge messages). */
const maxKeyLength = 64;

/**
 * Paths (`spec.listeners[0].tls.optoins`) of the fields of `value` that `schema` does not declare.
 * Meant for a value that `schema` accepted: where value and schema disagree the walk just stops there.
 */
export function unknownFields(
  schema: z.ZodType,
  value: unknown,
  limit: number = unknownFieldLimit,
): UnknownFields {
  const paths: string[] = [];
  let more = 0;
  const report = (path: string, key: string) => {
    if (paths.length < limit) paths.push(join(path, key));
    else more++;
  };
  walk(schema, value, "", report);
  return { paths, more };
}

/** The sentence a load problem uses for `found`, or undefined when there is nothing to say. */
export function describeUnknownFields(found: UnknownFields): string | undefined {
  if (found.paths.length === 0 && found.more === 0) return undefined;
  const listed = found.paths.map((p) => `${p}: unknown field, not read`);
  if (found.more > 0) listed.push(`and ${found.more} more unknown field${found.more === 1 ? "" : "s"}`);
  return listed.join("; ");
}

type Report = (path: string, key: string) => void;

/** The parts of zod's internal definition the walk reads (zod v4 `_zod.def`). */
interface Def {
  readonly type: string;
  readonly innerType?: z.ZodType;
  readonly shape?: Readonly<Record<string, z.ZodType>>;
  readonly catchall?: z.ZodType;
  readonly element?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly options?: readonly z.ZodType[];
  readonly in?: z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Wrappers that hold one schema and accept the same shape of value. */
const wrappers: ReadonlySet<string> = new Set([
  "optional",
  "nullable",
  "default",
  "prefault",
  "nonoptional",
  "readonly",
  "catch",
]);

function walk(schema: z.ZodType, value: unknown, path: string, report: Report): void {
  if (value === null || value === undefined || typeof value !== "object") return;
  const inner = unwrap(schema);
  const def = defOf(inner);
  if (def.type === "array" && def.element && Array.isArray(value)) {
    for (const [i, item] of value.entries()) walk(def.element, item, `${path}[${i}]`, report);
    return;
  }
  if (def.type === "record" && def.valueType && !Array.isArray(value)) {
    for (const [key, item] of Object.entries(value)) walk(def.valueType, item, join(path, key), report);
    return;
  }
  if (def.type === "union" && def.options) {
    // The first option the value is valid for is the one it was read as.
    const option = def.options.find((o) => o.safeParse(value).success);
    if (option) walk(option, value, path, report);
    return;
  }
  if (def.type !== "object" || !def.shape || Array.isArray(value) || openObjects.has(inner)) return;
  const catchall = def.catchall === undefined ? "unknown" : defOf(def.catchall).type;
  const extrasUnknown = catchall === "unknown" || catchall === "any" || catchall === "never";
  for (const [key, item] of Object.entries(value)) {
    const field = Object.hasOwn(def.shape, key) ? def.shape[key] : undefined;
    if (field) walk(field, item, join(path, key), report);
    else if (extrasUnknown) report(path, key);
    else if (def.catchall) walk(def.catchall, item, join(path, key), report);
  }
}

/** The schema under optional/nullable/default/… wrappers and the input side of a pipe. */
function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let def = defOf(s); ; def = defOf(s)) {
    const next = wrappers.has(def.type) ? def.innerType : def.type === "pipe" ? def.in : undefined;
    if (next === undefined) return s;
    s = next;
  }
}

function join(path: string, key: string): string {
  const shown = key.length > maxKeyLength ? `${key.slice(0, maxKeyLength)}…` : key;
  return path === "" ? shown : `${path}.${shown}`;
}
