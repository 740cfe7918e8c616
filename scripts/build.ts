/**
 * `bun run build`: Gatehouse as one executable, `dist/gatehouse` (this machine's platform), plus
 * `dist/gatehouse-linux-arm64` (or -x64, whichever this machine is not) when Bun can fetch that
 * runtime, and `dist/kubectl-gatehouse`, a link kubectl finds as the `kubectl gatehouse` plugin. With one
 * `--target`, that one is `dist/gatehouse`.
 *
 *   bun scripts/build.ts [--outdir DIR] [--target native|linux-x64|linux-arm64|all] [--without-bytecode]
 *
 * Minified, with bytecode (parsed ahead of time: a shorter start), version and commit embedded for
 * `gatehouse version` (cli/self.ts). The executable reads no `.env` or `bunfig.toml` from where it is
 * started: its behaviour is its flags and environment, as in a container. A cross-target build that fails
 * in `all` (no network to fetch that Bun runtime) is reported and skipped; the native one, and any one
 * target asked for by name, must succeed (exit 1 otherwise).
 */
import { existsSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import pkg from "../package.json" with { type: "json" };

const ROOT = resolve(import.meta.dir, "..");
const NATIVE = `linux-${process.arch === "arm64" ? "arm64" : "x64"}`;
const TARGETS = ["linux-x64", "linux-arm64"] as const;

const { values } = parseArgs({
  options: {
    outdir: { type: "string", default: join(ROOT, "dist") },
    target: { type: "string", default: "all" },
    // For the startup bench's comparison (bench/startup.ts); releases keep bytecode.
    "without-bytecode": { type: "boolean", default: false },
  },
});
const outdir = resolve(values.outdir as string);
const asked = values.target as string;
if (asked !== "all" && asked !== "native" && !(TARGETS as readonly string[]).includes(asked)) {
  process.stderr.write(`build: --target must be native, all, ${TARGETS.join(" or ")}\n`);
  process.exit(2);
}

function commit(): string {
  if (process.env.GATEHOUSE_COMMIT) return process.env.GATEHOUSE_COMMIT;
  const r = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT, stderr: "ignore" });
  return r.exitCode === 0 ? r.stdout.toString().trim() : "unknown";
}

/** Compiles for `target`; the output path, or undefined (after saying why) when Bun cannot. */
function build(target: string, outfile: string): string | undefined {
  const define = (name: string, value: string) => ["--define", `${name}=${JSON.stringify(value)}`];
  const args = ["build", "--compile", "--minify", "--sourcemap=none"]
    .concat(values["without-bytecode"] ? [] : ["--bytecode"])
    .concat(["--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig"])
    .concat(target === NATIVE ? [] : [`--target=bun-${target}`])
    .concat(define("GATEHOUSE_BUILD_VERSION", pkg.version))
    .concat(define("GATEHOUSE_BUILD_COMMIT", commit()))
    .concat(define("GATEHOUSE_BUILD_TARGET", target))
    .concat(["--outfile", outfile, join(ROOT, "src/main.ts")])
    // A Worker's script is bundled only when named as an entrypoint (Bun's executables guide): the WAF
    // engine's thread (src/waf/engine-queue.ts starts it).
    .concat([join(ROOT, "src/waf/engine-thread.ts")]);
  const started = performance.now();
  const r = Bun.spawnSync([process.execPath, ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) {
    const why = (r.stderr.toString() || r.stdout.toString()).trim().split("\n").slice(-3).join(" | ");
    process.stderr.write(`build: ${target} not built: ${why}\n`);
    return undefined;
  }
  const mb = (Bun.file(outfile).size / 1e6).toFixed(1);
  const s = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(`build: ${outfile} (${target}, ${mb} MB, ${s} s)\n`);
  return outfile;
}

mkdirSync(outdir, { recursive: true });
const wanted =
  asked === "all" ? [NATIVE, ...TARGETS.filter((t) => t !== NATIVE)] : [asked === "native" ? NATIVE : asked];
let failed = false;
for (const target of wanted) {
  // One target asked for is always `gatehouse` (the image's build stage cross-compiles by name).
  const outfile = join(
    outdir,
    target === NATIVE || wanted.length === 1 ? "gatehouse" : `gatehouse-${target}`,
  );
  // A stale file from an earlier build must not pass for this one.
  rmSync(outfile, { force: true });
  // Only an optional cross target (in `all`) may be skipped; one asked for by name must be built.
  if (build(target, outfile) === undefined && (target === NATIVE || wanted.length === 1)) failed = true;
}
if (existsSync(join(outdir, "gatehouse")) && !failed) {
  const plugin = join(outdir, "kubectl-gatehouse");
  if (existsSync(plugin)) rmSync(plugin);
  symlinkSync("gatehouse", plugin);
  process.stdout.write(`build: ${plugin} → gatehouse (kubectl plugin)\n`);
}
process.exit(failed ? 1 : 0);
