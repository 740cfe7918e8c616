import { dumpTranslateResult } from "../model/dump.ts";
import { type TranslateOptions, translate } from "../translate/translate.ts";
import type { LoadedInput } from "./input.ts";

/**
 * `gatehouse translate -f FILE... | --kube [flags]`: read manifests (or a cluster, once: input.ts), print the model and every problem as YAML,
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
  input: LoadedInput,
  options: Partial<TranslateOptions>,
  strict = false,
): Promise<number> {
  const result = translate(input.snapshot, options);
  const problems = [...input.problems, ...result.problems];
  // Awaited: process.exit right after a plain stdout write drops what a slow pipe has not taken yet
  // (a piped output was cut at 64 KB).
  await Bun.write(Bun.stdout, dumpTranslateResult({ ...result, problems }));
  for (const note of input.notes) process.stderr.write(`${note}\n`);
  if (input.exitCode !== 0) return input.exitCode;
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
