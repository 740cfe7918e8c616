import { dumpTranslateResult } from "../model/dump.ts";
// Not the folder source's index: its watcher is for serve.
import { loadFiles } from "../sources/file/load.ts";
import { loadProblems } from "../sources/file/problems.ts";
import { type TranslateOptions, translate } from "../translate/translate.ts";

/**
 * `gatehouse translate -f FILE... [flags]`: read manifests, print the model and every problem as YAML,
 * serve nothing. The flags are serve's that change translation (translate-options.ts), and certificates
 * are checked against the clock, so the output is what `serve` with the same flags would compute. Load problems (unreadable file, YAML syntax error, unknown field,
 * schema failure, duplicate) come first in `problems`, with file and document, then translation's.
 * Exit code: 0 when everything loaded (translation problems are output, not failures); 1 when some
 * object could not be loaded, or with `strict` when there is any problem but an info (a warning included, so a
 * GitOps pipeline can refuse what Gatehouse would not serve as written); 2 when a whole file could not be
 * used (unreadable, not YAML). stderr gets one summary line in the non-zero cases, so scripts piping
 * stdout still see that something was refused.
 */
export async function runTranslate(
  files: readonly string[],
  options: Partial<TranslateOptions>,
  strict = false,
): Promise<number> {
  const load = await loadFiles(files);
  const result = translate(load.snapshot, options);
  const problems = [...loadProblems(load), ...result.problems];
  // Awaited: process.exit right after a plain stdout write drops what a slow pipe has not taken yet
  // (a piped output was cut at 64 KB).
  await Bun.write(Bun.stdout, dumpTranslateResult({ ...result, problems }));
  if (load.errors.length > 0) {
    const n = load.errors.length;
    process.stderr.write(`gatehouse translate: ${n} load problem${n === 1 ? "" : "s"} (see problems)\n`);
    return load.errors.some((e) => e.docIndex === -1) ? 2 : 1;
  }
  const counted = problems.filter((p) => p.severity !== "info");
  if (strict && counted.length > 0) {
    const n = counted.length;
    process.stderr.write(
      `gatehouse translate: ${n} problem${n === 1 ? "" : "s"} with --strict (see problems)\n`,
    );
    return 1;
  }
  return 0;
}
