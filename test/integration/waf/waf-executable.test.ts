/**
 * The WAF in the compiled executable (scripts/build.ts, without bytecode: a second or so): the engine's
 * worker is a second entrypoint of the build, found in Bun's embedded file system, so an attack is
 * refused (403) and a clean request passed on both fronts, as from source. Without it the worker cannot
 * start and every WAF request answers 503 (fail closed), which is what this would catch.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gateway-process.ts";

const ROOT = resolve(import.meta.dir, "../../..");
let dir = "";
let exe = "";
const backend = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "gatehouse-waf-exe-"));
  const build = Bun.spawn(
    [
      process.execPath,
      join(ROOT, "scripts/build.ts"),
      ...["--target", "native", "--outdir", dir, "--without-bytecode"],
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  if ((await build.exited) !== 0) throw new Error(`build failed: ${await new Response(build.stderr).text()}`);
  exe = join(dir, "gatehouse");
  const ingress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: waf
  namespace: shop
  annotations:
    nginx.ingress.kubernetes.io/enable-modsecurity: "true"
    nginx.ingress.kubernetes.io/enable-owasp-core-rules: "true"
    gatehouse.dev/waf-mode: Enforce
spec:
  ingressClassName: gatehouse
  rules:
    - host: waf.test
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
`;
  await writeFile(
    join(dir, "all.yaml"),
    [ingress, serviceYaml("web", "shop", backend.port as number)].join("---\n"),
  );
}, 120_000);

afterAll(async () => {
  backend.stop(true);
  await rm(dir, { recursive: true, force: true });
});

forEachFront("the WAF in the compiled executable", (front) => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGatewayProcess(dir, ["--front", front, "--workers", "1"], [exe]);
  });
  afterAll(() => gw.kill());

  test("the engine's worker runs: an attack is refused, a clean request passed", async () => {
    const get = (path: string) =>
      fetch(`http://127.0.0.1:${gw.httpPort}${path}`, {
        headers: { host: "waf.test", "user-agent": "Mozilla/5.0" },
      });
    // The first request may wait for the rule set to load in the worker.
    const clean = await get("/items?page=2");
    expect({ status: clean.status, output: clean.status === 200 ? "" : gw.output() }).toEqual({
      status: 200,
      output: "",
    });
    expect((await get("/items?id=1%27%20OR%20%271%27%3D%271")).status).toBe(403);
  });
});
