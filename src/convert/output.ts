/**
 * convert's output: multi-document YAML ready for `kubectl apply -f -`, in a stable order, each finding
 * as a `# gatehouse convert: …` comment before the first object made from its Ingress (findings about an
 * Ingress that made no object, and the summary, head the output), and the same lines for stderr.
 */
import { Document } from "yaml";
import type { ConvertResult } from "./convert.ts";
import { type Finding, refText, sameRef } from "./findings.ts";
import { NOTE_PREFIX, SOURCE_ANNOTATION } from "./names.ts";

type Json = Record<string, unknown>;

/** The YAML text of a conversion. */
export function conversionYaml(result: ConvertResult): string {
  const placed = new Set<Finding>();
  const docs: string[] = [];
  const bodies = result.objects.map((o) => {
    const about = findingsFor(o, result.findings).filter((f) => !placed.has(f));
    for (const f of about) placed.add(f);
    return documentText(o, about.map(findingLine));
  });
  const orphans = result.findings.filter((f) => !placed.has(f));
  const head = [summaryLine(result), ...orphans.map(findingLine)].map((l) => `# ${l}`).join("\n");
  docs.push(...bodies);
  return `${head}\n${docs.length > 0 ? docs.join("---\n") : ""}`;
}

/** One line per finding, for stderr. */
export function findingLines(result: ConvertResult): string[] {
  return result.findings.map(findingLine);
}

export function summaryLine(result: ConvertResult): string {
  const v = result.verified;
  const counted = result.findings.filter((f) => f.kind !== "note").length;
  const check =
    v.skipped !== undefined
      ? `not verified (${v.skipped})`
      : `${v.same} of ${v.hosts} converted host${v.hosts === 1 ? "" : "s"} translate to the routes the Ingresses served`;
  return `${NOTE_PREFIX} ${result.objects.length} object${result.objects.length === 1 ? "" : "s"}; ${check}; ${counted} finding${counted === 1 ? "" : "s"} (${result.findings.length - counted} note${result.findings.length - counted === 1 ? "" : "s"})`;
}

/** One line, control characters escaped: a message quotes input, and a line break would end the comment. */
function findingLine(f: Finding): string {
  const line = `${NOTE_PREFIX} ${refText(f.object)}: ${f.kind === "note" ? "note: " : ""}${f.message}`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are what is escaped
  return line.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Findings that belong beside this object: those about the Ingress it was made from, or about itself. */
function findingsFor(o: Json, findings: readonly Finding[]): Finding[] {
  const meta = o.metadata as { name: string; namespace: string };
  const self = { kind: o.kind as string, namespace: meta.namespace, name: meta.name };
  const from = o.kind === "HTTPRoute" || o.kind === "TLSRoute" ? madeFrom(o) : undefined;
  return findings.filter((f) => sameRef(f.object, self) || (from !== undefined && sameRef(f.object, from)));
}

/** The Ingress a route was made from, as its annotation names it. */
function madeFrom(o: Json): { kind: string; namespace: string; name: string } | undefined {
  const meta = o.metadata as { name: string; namespace: string; annotations?: Record<string, string> };
  const source = meta.annotations?.[SOURCE_ANNOTATION];
  return source === undefined ? undefined : { kind: "Ingress", namespace: meta.namespace, name: source };
}

function documentText(o: Json, comments: readonly string[]): string {
  const doc = new Document(o, { aliasDuplicateObjects: false });
  if (comments.length > 0) doc.commentBefore = comments.map((c) => ` ${c}`).join("\n");
  return doc.toString({ lineWidth: 0 });
}
