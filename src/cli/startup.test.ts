/**
 * What `gatehouse translate` loads, and the usage text. The translate command's start is most of its run
 * (docs/performance.md has the figures); a wall-clock bound would be flaky on a loaded machine, so what
 * is held here is the cause: the modules that made it slow stay off its path.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseServeConfig, serveConfigSchema } from "../config/config.ts";
import { translationDefaults, translationFlags } from "./translate-options.ts";

const repo = join(import.meta.dir, "../..");
const main = join(repo, "src/main.ts");
const dir = mkdtempSync(join(tmpdir(), "gatehouse-startup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The files a `bun src/main.ts …` run loaded (Bun lists ES modules in require.cache too). */
function loadedBy(args: readonly string[], env: Record<string, string> = {}): string[] {
  const list = join(dir, `loaded-${Math.random()}.json`);
  const preload = join(dir, "list-modules.ts");
  writeFileSync(
    preload,
    `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(list)}, JSON.stringify(Object.keys(require.cache))));\n`,
  );
  // Without the test suite's self-checks (test/setup.ts), which compare with the yaml package.
  const { GATEHOUSE_TRANSLATE_CHECK: _, ...inherited } = process.env;
  const run = Bun.spawnSync(["bun", "--preload", preload, main, ...args], {
    cwd: repo,
    env: { ...inherited, ...env },
  });
  expect(run.exitCode).toBe(0);
  return (JSON.parse(readFileSync(list, "utf8")) as string[]).map((f) => relative(repo, f));
}

/** Built-in modules a loaded source file imports for their values (type imports load nothing). */
function builtinsImported(files: readonly string[]): string[] {
  const found = new Set<string>();
  for (const file of files.filter((f) => f.startsWith("src/"))) {
    const source = readFileSync(join(repo, file), "utf8");
    for (const m of source.matchAll(/^import (?!type\b)[^;]*?from "(node:[a-z/_]+)"/gm))
      found.add(m[1] as string);
  }
  return [...found].sort();
}

describe("gatehouse translate -f", () => {
  const loaded = loadedBy(["translate", "-f", "examples/"]);

  test("the list is the real one", () => {
    expect(loaded).toContain("src/cli/translate.ts");
    expect(loaded.some((f) => f.startsWith("node_modules/zod/"))).toBe(true);
  });

  test("loads nothing of serve: no listeners, Kubernetes client, Redis, metrics, config schema", () => {
    const serveOnly = [
      /^src\/cli\/serve\.ts$/,
      /^src\/config\//,
      /^src\/proxy\/(?!match\/)/,
      /^src\/sources\/kubernetes\//,
      /^src\/sources\/file\/folder-source\.ts$/,
      /^src\/observability\/(?!logger\.ts$)/,
      /^src\/(auth|ratelimit|status)\/(?!cidr\.ts$|conditions\.ts$|reasons\.ts$)/,
    ];
    expect(loaded.filter((f) => serveOnly.some((re) => re.test(f)))).toEqual([]);
  });

  test("of the packages, only zod; not the yaml package (Bun.YAML reads, yaml-text.ts prints)", () => {
    const packages = new Set(loaded.filter((f) => f.startsWith("node_modules/")).map((f) => f.split("/")[1]));
    expect([...packages]).toEqual(["zod"]);
  });

  test("of node's modules, none that load streams (net, crypto, util, tls, http)", () => {
    expect(builtinsImported(loaded)).toEqual(["node:fs/promises", "node:path"]);
  });

  test("builds only the schemas of the kinds it reads", () => {
    const schemas = loaded.filter(
      (f) => f.startsWith("src/sources/schema/") || f.includes("auth-policy-spec"),
    );
    expect(schemas).not.toContain("src/sources/schema/gateway.ts");
    expect(schemas).not.toContain("src/translate/policies/auth-policy-spec.ts");
  });

  test("with a flag, the serve configuration validates it", () => {
    expect(loadedBy(["translate", "-f", "examples/", "--http-port", "9000"])).toContain(
      "src/config/config.ts",
    );
    expect(loadedBy(["translate", "-f", "examples/"], { GATEHOUSE_HTTP_PORT: "9000" })).toContain(
      "src/config/config.ts",
    );
  });
});

test("translate's defaults are serve's", () => {
  const serve = parseServeConfig(["--dir", "."], {});
  const picked = Object.fromEntries(translationFlags.map((flag) => [flag, serve[flag]]));
  expect(translationDefaults).toEqual(picked as typeof translationDefaults);
});

describe("usage", () => {
  const usage = Bun.spawnSync(["bun", main, "help"]).stdout.toString();
  const flagsIn = (text: string) => new Set([...text.matchAll(/--([a-z0-9-]+)/g)].map((m) => m[1] as string));
  const serveSection = usage.slice(usage.indexOf("gatehouse serve"), usage.indexOf("gatehouse translate"));
  const translateSection = usage.slice(
    usage.indexOf("gatehouse translate"),
    usage.indexOf("gatehouse routes"),
  );

  test("serve's flags are README's command line's", () => {
    const readme = readFileSync(join(repo, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## The command line"));
    const block = section.slice(
      section.indexOf("```") + 3,
      section.indexOf("```", section.indexOf("```") + 3),
    );
    const readmeServe = block.slice(block.indexOf("gatehouse serve"), block.indexOf("gatehouse translate"));
    expect([...flagsIn(serveSection)].sort()).toEqual([...flagsIn(readmeServe)].sort());
    const known = Object.keys(serveConfigSchema.shape);
    expect([...flagsIn(serveSection)].filter((f) => !known.includes(f))).toEqual([]);
  });

  test("translate's flags are the ones it accepts", () => {
    expect([...flagsIn(translateSection)].sort()).toEqual(
      [...translationFlags, "strict", "kube", "kubeconfig"].sort(),
    );
  });
});
