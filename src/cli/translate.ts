import { dumpTranslateResult } from "../model/dump.ts";
import { loadFiles } from "../sources/file/index.ts";
import { translate } from "../translate/translate.ts";

/**
 * `gatehouse translate -f FILE... [--ingress-class NAME]`: read manifests, print the model and every
 * problem as YAML, serve nothing. Exit code 0 even with problems (they are output, not failures);
 * 2 when a file cannot be read at all.
 */
export async function runTranslate(
  files: readonly string[],
  ingressClass: string | undefined,
): Promise<number> {
  const load = await loadFiles(files);
  for (const e of load.errors) {
    process.stderr.write(`${e.file}#${e.docIndex}${e.name ? ` ${e.kind}/${e.name}` : ""}: ${e.reason}\n`);
  }
  const result = translate(load.snapshot, ingressClass ? { ingressClass } : {});
  process.stdout.write(dumpTranslateResult(result));
  return load.errors.some((e) => e.docIndex === -1) ? 2 : 0;
}
