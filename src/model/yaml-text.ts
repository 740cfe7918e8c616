/**
 * The YAML text the yaml package prints for a dump (dump.ts: plain objects, arrays and scalars; maps of
 * scalars in flow style; no line folding), written here for the values dumps hold, so that printing
 * does not load the yaml package: loading it and its first stringify were a tenth of `gatehouse
 * translate`'s start. `yamlText` returns undefined for anything outside what it knows to print exactly as
 * the package does (a multi-line string, a control character, a key over 1000 characters…), and the
 * caller then uses the package. With GATEHOUSE_TRANSLATE_CHECK=1 (the tests, conformance) dump.ts
 * compares every text with the package's.
 */

/** Thrown inside, turned into undefined: the value is left to the yaml package. */
class Unsupported extends Error {}

/** `value` (keys already in their order) as the yaml package prints it, or undefined. */
export function yamlText(value: unknown): string | undefined {
  try {
    const text = inlineOrUndefined(value, false);
    if (text !== undefined) return `${text}\n`;
    return `${Array.isArray(value) ? blockSequence(value, "") : blockMap(value as YamlMap, "")}\n`;
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
}

type YamlMap = Record<string, unknown>;

function isMap(value: unknown): value is YamlMap {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isEmpty = (value: unknown) =>
  (Array.isArray(value) && value.length === 0) || (isMap(value) && Object.keys(value).length === 0);

/** A non-empty map of scalars and empty collections: dump.ts prints it in flow style. */
function isLeafy(map: YamlMap): boolean {
  const values = Object.values(map);
  return (
    values.length > 0 &&
    values.every((v) => (typeof v !== "object" && v !== undefined) || v === null || isEmpty(v))
  );
}

/** A value that fits on its line: a scalar, an empty collection or a leafy map. Undefined otherwise. */
function inlineOrUndefined(value: unknown, inFlow: boolean): string | undefined {
  if (Array.isArray(value)) return value.length === 0 ? "[]" : undefined;
  if (isMap(value)) {
    if (Object.keys(value).length === 0) return "{}";
    if (!isLeafy(value)) return undefined;
    const pairs = Object.entries(value).map(([k, v]) => `${string(k, true)}: ${inline(v, true)}`);
    return `{ ${pairs.join(", ")} }`;
  }
  return scalar(value, inFlow);
}

function inline(value: unknown, inFlow: boolean): string {
  const text = inlineOrUndefined(value, inFlow);
  if (text === undefined) throw new Unsupported();
  return text;
}

function blockMap(map: YamlMap, indent: string): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(map)) {
    const head = `${indent}${string(key, false)}:`;
    const text = inlineOrUndefined(value, false);
    if (text !== undefined) lines.push(`${head} ${text}`);
    else if (Array.isArray(value)) lines.push(head, blockSequence(value, `${indent}  `));
    else lines.push(head, blockMap(value as YamlMap, `${indent}  `));
  }
  return lines.join("\n");
}

function blockSequence(items: readonly unknown[], indent: string): string {
  const lines: string[] = [];
  for (const item of items) {
    const text = inlineOrUndefined(item, false);
    if (text !== undefined) lines.push(`${indent}- ${text}`);
    else {
      const nested = Array.isArray(item)
        ? blockSequence(item, `${indent}  `)
        : blockMap(item as YamlMap, `${indent}  `);
      lines.push(`${indent}- ${nested.slice(indent.length + 2)}`);
    }
  }
  return lines.join("\n");
}

function scalar(value: unknown, inFlow: boolean): string {
  if (value === null) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    if (Number.isNaN(value)) return ".nan";
    if (!Number.isFinite(value)) return value < 0 ? "-.inf" : ".inf";
    return Object.is(value, -0) ? "-0" : JSON.stringify(value);
  }
  if (typeof value === "string") return string(value, inFlow);
  throw new Unsupported(); // undefined, bigint, symbol, function
}

/**
 * Strings the yaml package reads back as another type (core schema: null, booleans, integers, floats)
 * and therefore quotes.
 */
const otherTypes = [
  /^(?:~|[Nn]ull|NULL)?$/,
  /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/,
  /^0o[0-7]+$/,
  /^[-+]?[0-9]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
];

/** The yaml package's plain-scalar refusals (stringifyString.js `plainString`), single-line part. */
const notPlain = /^[\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|:[ \t]|[\t ]#|[\t :]$/;

/**
 * A string (value or key) as the yaml package prints it without folding: plain when it reads back as the
 * same string,
 * else single-quoted when it holds a `"` and no `'`, else double-quoted (JSON's escapes, which are the
 * package's for printable characters). Printable single-line text only.
 */
function string(value: string, inFlow: boolean): string {
  const printable = /^[\x20-\x7e\u00a1-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]*$/;
  if (!printable.test(value) || value.length > 1000 || /^(?:---|\.\.\.)/.test(value)) throw new Unsupported();
  const plain =
    !(inFlow && /[[\]{},]/.test(value)) && !notPlain.test(value) && !otherTypes.some((re) => re.test(value));
  if (plain) return value;
  if (value.includes('"') && !value.includes("'")) return `'${value}'`;
  return JSON.stringify(value);
}
