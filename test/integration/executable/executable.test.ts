/**
 * The compiled executable (`bun run build`, scripts/build.ts), built once for this machine and run as a
 * user without Bun would run it: `version`, `translate`, and `serve` on examples/ with the default workers
 * (one per core) answering the README's curl lines, from a folder and from the (test) Kubernetes API.
 * The demo backends run in this process on free ports; examples/ is copied with its EndpointSlices
 * pointed at them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { demoBackends, startDemoBackends } from "../../../examples/backends.ts";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gateway-process.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";

const ROOT = resolve(import.meta.dir, "../../..");
let dir = "";
let exe = "";
let examples = "";
let backends: ReturnType<typeof startDemoBackends> | undefined;
const gateways: GatewayProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "gatehouse-exe-"));
  const build = Bun.spawn(
    [process.execPath, join(ROOT, "scripts/build.ts"), "--target", "native", "--outdir", dir],
    { stdout: "pipe", stderr: "pipe" },
  );
  if ((await build.exited) !== 0) throw new Error(`build failed: ${await new Response(build.stderr).text()}`);
  exe = join(dir, "gatehouse");
  backends = startDemoBackends(demoBackends.map((b) => ({ ...b, port: 0 })));
  examples = join(dir, "examples");
  await cp(join(ROOT, "examples"), examples, { recursive: true, filter: (f) => !f.endsWith(".ts") });
  let services = await readFile(join(examples, "services.yaml"), "utf8");
  demoBackends.forEach((b, i) => {
    services = services.replace(`port: ${b.port}`, `port: ${backends?.ports[i]}`);
  });
  await writeFile(join(examples, "services.yaml"), services);
}, 180_000);

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.kill()));
  backends?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn([exe, ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, out, err };
}

/** The README's curl lines: host, path, and the Service that must answer. */
const README_CURLS = [
  ["demo.localhost", "/", "web"],
  ["demo.localhost", "/api/hello", "api"],
  ["shop.apps.localhost", "/", "web"],
] as const;

async function answers(port: number): Promise<string[]> {
  const got: string[] = [];
  for (const [host, path] of README_CURLS) {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { host } });
    got.push(`${res.status} ${((await res.json()) as { service?: string }).service}`);
  }
  return got;
}

describe("the compiled executable", () => {
  test("version names the build: version, commit and target embedded", async () => {
    const { code, out } = await run("version", "--json");
    const pkg = (await Bun.file(join(ROOT, "package.json")).json()) as { version: string };
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ version: pkg.version, build: `compiled linux-${process.arch}` });
    expect((JSON.parse(out) as { commit: string }).commit).not.toBe("");
  });

  test("translate reads a folder as from source, and a bad flag is refused with usage", async () => {
    const { code, out } = await run("translate", "-f", examples);
    expect(code).toBe(0);
    expect(out).toContain("hostname: demo.localhost");
    expect(out).toContain("problems: []");
    const bad = await run("translate", "-f", examples, "--no-such-flag");
    expect([bad.code, bad.err.includes("not a translate flag")]).toEqual([2, true]);
  });

  test("as the kubectl plugin (kubectl-gatehouse, a link to it), routes lists what examples/ serves", async () => {
    const p = Bun.spawn([join(dir, "kubectl-gatehouse"), "routes", "-f", examples], { stdout: "pipe" });
    const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    expect(code).toBe(0);
    expect(out).toContain("demo.localhost    /api*     → default/api:80  Ingress default/demo");
  });

  /** The workers a serving process started: its direct children, from /proc (no procps needed). */
  const workerPids = async (gw: GatewayProcess): Promise<string[]> => {
    const pid = gw.proc.pid;
    const text = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
    return text.split(/\s+/).filter(Boolean);
  };
  const workersOf = async (gw: GatewayProcess) => (await workerPids(gw)).length;

  test("serve with the default workers (one per core) answers the README's curl lines", async () => {
    const gw = await startGatewayProcess(examples, [], [exe]);
    gateways.push(gw);
    expect(await workersOf(gw)).toBe(availableParallelism() - 1);
    expect(await answers(gw.httpPort)).toEqual(README_CURLS.map(([, , service]) => `200 ${service}`));
  }, 30_000);

  test("serve --workers 3 starts two workers of the executable itself, whatever the cores", async () => {
    const gw = await startGatewayProcess(examples, ["--workers", "3"], [exe]);
    gateways.push(gw);
    expect(await workersOf(gw)).toBe(2);
    const cmdline = (pid: string) => readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    for (const pid of await workerPids(gw))
      expect((await cmdline(pid)).split("\0").slice(0, 2)).toEqual([exe, "serve"]);
    expect(await answers(gw.httpPort)).toEqual(README_CURLS.map(([, , service]) => `200 ${service}`));
  }, 30_000);

  test("serve --kube reads the same objects from the Kubernetes API", async () => {
    const api = await KubeApiServer.start();
    try {
      for (const file of [
        "00-ingress-class.yaml",
        "demo-ingress.yaml",
        "apps-ingress.yaml",
        "services.yaml",
      ]) {
        // One document parses to an object, several to an array.
        const docs = [Bun.YAML.parse(await readFile(join(examples, file), "utf8"))].flat() as Obj[];
        for (const doc of docs) if (doc?.kind) api.apply(doc);
      }
      const kubeconfig = await api.writeKubeconfig(join(dir, "kubeconfig"));
      const gw = await startGatewayProcess(
        ["--kube", "--kubeconfig", kubeconfig, "--leader-election-namespace", "default"],
        ["--workers", "1"],
        [exe],
      );
      gateways.push(gw);
      expect(await answers(gw.httpPort)).toEqual(README_CURLS.map(([, , service]) => `200 ${service}`));
    } finally {
      await api.stop();
    }
  }, 30_000);
});
