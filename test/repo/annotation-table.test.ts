/** docs/ingress.md's annotation table is the code's table (scripts/annotation-table.ts makes it). */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { annotationTable, DOC, withTable } from "../../scripts/annotation-table.ts";

test("docs/ingress.md carries the annotation table as the code has it", () => {
  const doc = readFileSync(DOC, "utf8");
  // Stale: run `bun scripts/annotation-table.ts --write`.
  expect(withTable(doc, annotationTable())).toBe(doc);
});
