/**
 * Bun's native YAML parser, used where it provably reads a file as the yaml package does. The yaml
 * package stays the reference (documents.ts): its cold start (loading it, then its first parse, about
 * 50 ms) was a third of `gatehouse translate`'s start, while `Bun.YAML.parse` takes under a millisecond.
 *
 * The two parsers agree on the YAML manifests are written in, but not everywhere: Bun keeps the last of
 * two equal keys where the yaml package refuses the file, merges `<<` keys, expands aliases without the
 * alias limit, returns a file's documents as one array (indistinguishable from a document that is a
 * sequence), reads a null key as "null", and numbers such as `-0x1F` differently; its error messages are
 * its own. So `nativeDocuments` answers only for text inside a subset it checks line by line, and
 * undefined (use the yaml package) for anything else: a syntax error, a directive, `...`, anchors,
 * aliases, tags, explicit and complex keys, flow mapping entries without `key: `, flow collections or
 * quoted scalars over several lines, tabs, CRs. Equal keys are caught by counting: the key indicators
 * (`key:`) in the text must equal the keys of the parsed objects, which they exceed when a key repeats.
 * With GATEHOUSE_TRANSLATE_CHECK=1 (the tests, conformance) documents.ts compares every answer with the
 * yaml package's; native-yaml.test.ts compares them on the repository's YAML and generated documents.
 */

/**
 * Text left to the yaml package whatever its lines: control characters (tabs and CRs included), Unicode
 * line breaks and byte order marks, directives, document ends, and the numbers the two parsers read
 * differently (signed hex and octal, hex beyond 2^53).
 */
const declined =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]|^%|^\.\.\.|[-+]0[xXoO]|0[xX][0-9a-fA-F]{14}/m;

/** The value of each document in order (null for an empty one), or undefined: use the yaml package. */
export function nativeDocuments(text: string): unknown[] | undefined {
  if (declined.test(text)) return undefined;
  const documents = splitDocuments(text);
  if (documents === undefined) return undefined;
  const values: unknown[] = [];
  for (const document of documents) {
    const keys = keyIndicators(document.split("\n"));
    if (keys === undefined) return undefined;
    let value: unknown;
    try {
      value = Bun.YAML.parse(document);
    } catch {
      return undefined; // the yaml package words the error
    }
    if (keyCount(value) !== keys) return undefined;
    values.push(value);
  }
  return values;
}

/**
 * The text of each document, as the yaml package counts them: every `---` line starts a document, and
 * what comes before the first one is a document only when it holds more than blank lines and comments.
 * Undefined when a `---` line carries content (`--- |`), which is left to the yaml package.
 */
function splitDocuments(text: string): string[] | undefined {
  const documents: string[] = [];
  let start = 0;
  for (const marker of text.matchAll(/^---.*$/gm)) {
    if (!/^---( +#.*| *)$/.test(marker[0])) return undefined;
    documents.push(text.slice(start, marker.index));
    start = marker.index + marker[0].length + 1;
  }
  documents.push(text.slice(start));
  if ((documents[0] as string).split("\n").every((line) => /^ *(#.*)?$/.test(line))) documents.shift();
  return documents;
}

/**
 * The number of key indicators (`key:`, `- key:`, `[a: b]`) in a document's lines, outside comments and
 * quoted scalars; undefined when a line steps outside the subset `nativeDocuments` trusts. Never fewer
 * than the document's keys: every key of the subset has one. Block scalar content is read as any other
 * line: it holds no key, so what is counted there only makes the count too high (the yaml package
 * then decides), never too low.
 */
function keyIndicators(lines: readonly string[]): number | undefined {
  let keys = 0;
  for (const line of lines) {
    const indent = line.search(/[^ ]/);
    if (indent === -1) continue;
    const found = lineKeys(line, indent);
    if (found === undefined) return undefined;
    keys += found;
  }
  return keys;
}

/** Characters that start something other than a plain scalar, where a node starts. */
const nodeIndicators = new Set(["&", "*", "!", "?", "%", "@", "`", ":", ",", "}", "]", "#", "|", ">"]);

/**
 * The key indicators on one line, scanned from its first non-space character. Flow collections must
 * close on their line, and every entry of a flow mapping needs its `key: ` (`{a, b}` has keys without
 * one). In block context a line holds one key at most, and a `- ` only before it.
 */
function lineKeys(line: string, from: number): number | undefined {
  let keys = 0;
  let blockKeys = 0;
  const open: ("[" | "{")[] = []; // flow collections, innermost last
  let entryKeyed = false; // the current entry of the innermost flow mapping has its key
  let nodeStart = true; // where a node (key, value, sequence entry) may begin
  // Just past a node that only a separator may follow: a quoted scalar (or its `:`), a flow collection.
  let ended: "quoted" | "collection" | undefined;
  for (let i = from; i < line.length; i++) {
    const c = line[i] as string;
    const next = line[i + 1];
    if (c === " ") continue;
    const inFlow = open.at(-1);
    if (c === "#" && (i === 0 || line[i - 1] === " ")) return inFlow === undefined ? keys : undefined;
    const closes = (c === "]" && inFlow === "[") || (c === "}" && inFlow === "{");
    if (ended !== undefined && !(inFlow && (c === "," || closes)) && !(ended === "quoted" && c === ":"))
      return undefined;
    if (nodeStart) {
      if (c === '"' || c === "'") {
        const end = closingQuote(line, i);
        if (end === undefined) return undefined;
        i = end;
        nodeStart = false;
        ended = "quoted";
      } else if (c === "-" && (next === " " || next === undefined)) {
        if (inFlow || blockKeys > 0) return undefined;
      } else if (c === "[" || c === "{") {
        if (inFlow === "{" && !entryKeyed) return undefined; // a collection as a key
        open.push(c);
        entryKeyed = false;
      } else if (closes && (line[i - 1] === "[" || line[i - 1] === "{")) {
        open.pop(); // `[]`, `{}`
        entryKeyed = true; // the enclosing entry, if a mapping's, was keyed before its value opened
        nodeStart = false;
        ended = "collection";
      } else if ((c === "|" || c === ">") && !inFlow && /^[-+0-9]*( +#.*| *)$/.test(line.slice(i + 1))) {
        return keys; // a block scalar header
      } else if (nodeIndicators.has(c) || (c === "<" && next === "<")) {
        return undefined;
      } else nodeStart = false;
      continue;
    }
    const flowEnd = inFlow && (next === "," || next === "]" || next === "}");
    if (c === ":" && (next === undefined || next === " " || flowEnd)) {
      if (i > 1000 || ended === "collection" || (inFlow === undefined && blockKeys > 0)) return undefined;
      if (inFlow && entryKeyed) return undefined;
      if (inFlow === undefined) blockKeys++;
      keys++;
      entryKeyed = true;
      nodeStart = true;
      ended = undefined;
    } else if (c === ":" && ended !== undefined) {
      return undefined;
    } else if (inFlow && (c === "," || closes)) {
      if (inFlow === "{" && !entryKeyed) return undefined;
      if (c === ",") nodeStart = true;
      else open.pop();
      // Past a closing bracket the enclosing entry is whole: a mapping's was keyed before its value.
      entryKeyed = c !== ",";
      ended = c === "," ? undefined : "collection";
    } else if (inFlow && "[]{}".includes(c)) {
      return undefined;
    } else ended = undefined;
  }
  return open.length === 0 ? keys : undefined;
}

/** Index of the quote closing the scalar opened at `open`, on the same line; undefined when it does not. */
function closingQuote(line: string, open: number): number | undefined {
  const quote = line[open];
  for (let i = open + 1; i < line.length; i++) {
    const c = line[i];
    if (quote === '"' && c === "\\") i++;
    else if (c === quote) {
      if (quote === "'" && line[i + 1] === "'") i++;
      else return i;
    }
  }
  return undefined;
}

/** Keys of every object in a parsed value; NaN when a key is "null", which Bun gives a null key. */
function keyCount(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + keyCount(v), 0);
  if (value === null || typeof value !== "object") return 0;
  let n = 0;
  for (const [key, v] of Object.entries(value)) {
    if (key === "null") return Number.NaN;
    n += 1 + keyCount(v);
  }
  return n;
}
