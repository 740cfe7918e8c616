/**
 * What this program is: how to start it again (for `serve --workers`), and which build it is (`gatehouse
 * version`). Gatehouse runs either as `bun src/main.ts` or as the executable `bun run build` compiles
 * (scripts/build.ts); the two differ in exactly these places.
 * - From source, `process.execPath` is Bun and the script is `Bun.main`: a worker is `bun main.ts serve …`.
 * - Compiled, `process.execPath` is the executable itself and `Bun.main` a path inside its embedded
 *   filesystem (`/$bunfs/…`, `B:/~BUN/…` on Windows): a worker is `gatehouse serve …`; passing the script
 *   too would make it the subcommand.
 */
import pkg from "../../package.json" with { type: "json" };

// Set by scripts/build.ts with `--define`; absent when running from source.
declare const GATEHOUSE_BUILD_VERSION: string | undefined;
declare const GATEHOUSE_BUILD_COMMIT: string | undefined;
declare const GATEHOUSE_BUILD_TARGET: string | undefined;

/** Whether this process is a compiled Gatehouse executable (not `bun src/main.ts`). */
export function isCompiled(main: string = Bun.main): boolean {
  return main.startsWith("/$bunfs/") || main.startsWith("B:/~BUN/") || main.startsWith("B:\\~BUN\\");
}

/** The argv prefix that starts this program again: subcommand and flags follow it. */
export function selfCommand(): string[] {
  return isCompiled() ? [process.execPath] : [process.execPath, Bun.main];
}

export interface BuildInfo {
  readonly version: string;
  /** Commit the executable was built from; from source, the work tree's HEAD when git can tell. */
  readonly commit: string;
  /** `compiled <target>` or `source`. */
  readonly build: string;
  readonly bun: string;
  readonly platform: string;
}

/**
 * This build's identity. scripts/build.ts embeds version, commit and target; an executable compiled
 * without them says `unknown` for those; from source the commit is asked of git (only by `version`).
 */
export function buildInfo(): BuildInfo {
  // typeof: from source these names are not defined at all.
  const version = typeof GATEHOUSE_BUILD_VERSION === "string" ? GATEHOUSE_BUILD_VERSION : undefined;
  const commit = typeof GATEHOUSE_BUILD_COMMIT === "string" ? GATEHOUSE_BUILD_COMMIT : undefined;
  const target = typeof GATEHOUSE_BUILD_TARGET === "string" ? GATEHOUSE_BUILD_TARGET : undefined;
  const compiled = isCompiled();
  return {
    version: version ?? pkg.version,
    commit: commit ?? (compiled ? "unknown" : sourceCommit()),
    build: compiled ? `compiled ${target ?? "unknown"}` : "source",
    bun: Bun.version,
    platform: `${process.platform}-${process.arch}`,
  };
}

function sourceCommit(): string {
  try {
    const r = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], {
      cwd: import.meta.dir,
      stdout: "pipe",
      stderr: "ignore",
    });
    const out = r.stdout.toString().trim();
    return r.exitCode === 0 && out !== "" ? out : "unknown";
  } catch {
    return "unknown"; // git not installed
  }
}
