#!/usr/bin/env bun
/**
 * Run the test API server on its own, seeded from YAML, to try `gatehouse serve --kube` by hand:
 *
 *   bun test/helpers/kube-api-serve.ts --port 6443 --kubeconfig /tmp/gatehouse-kubeconfig examples/
 *   bun src/main.ts serve --kube --kubeconfig /tmp/gatehouse-kubeconfig --http-port 8080
 *
 * Objects of kinds the server does not serve are skipped with a note. Ctrl-C stops it.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseAllDocuments } from "yaml";
import { KubeApiServer, type Obj } from "./kube-api-server.ts";

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: { port: { type: "string" }, kubeconfig: { type: "string" } },
  allowPositionals: true,
});

async function yamlFiles(path: string): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return [path];
  const names = (await readdir(path)).filter((n) => /\.ya?ml$/.test(n)).sort();
  return names.map((n) => join(path, n));
}

const api = await KubeApiServer.start({ port: Number(values.port ?? 0) });
for (const path of positionals) {
  for (const file of await yamlFiles(path)) {
    for (const doc of parseAllDocuments(await readFile(file, "utf8"))) {
      const obj = doc.toJS() as Obj | null;
      if (!obj?.kind) continue;
      try {
        api.apply(obj);
      } catch (err) {
        process.stderr.write(
          `skipped ${obj.kind} ${obj.metadata?.name} from ${file}: ${(err as Error).message}\n`,
        );
      }
    }
  }
}
const kubeconfig = await api.writeKubeconfig(values.kubeconfig ?? "/tmp/gatehouse-kubeconfig");
process.stdout.write(`test API server on ${api.url}; kubeconfig written to ${kubeconfig}\n`);
process.on("SIGINT", () => void api.stop().then(() => process.exit(0)));
