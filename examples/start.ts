/**
 * `bun start`: the demo backends plus the gateway serving this folder, in one process. Extra flags are
 * passed to `gatehouse serve` (e.g. `bun start --http-port 8000`). Edit the YAML here while it runs: the
 * gateway reloads it.
 */
import { join } from "node:path";
import { startGateway } from "../src/cli/serve.ts";
import { parseServeConfig } from "../src/config/config.ts";
import { startDemoBackends } from "./backends.ts";

const backends = startDemoBackends();
const config = parseServeConfig(["--dir", join(import.meta.dir), ...process.argv.slice(2)], process.env);
const gateway = await startGateway(config);
const port = config["http-port"];
process.stdout.write(`
Gatehouse is serving examples/ on http://localhost:${port} (admin on :${config["admin-port"]}). Try:
  curl -H 'Host: demo.localhost' localhost:${port}/
  curl -H 'Host: demo.localhost' localhost:${port}/api/hello
  curl -H 'Host: shop.apps.localhost' localhost:${port}/
  curl localhost:${config["admin-port"]}/debug/model
Ctrl-C stops it.
`);
const stop = async () => {
  await gateway.stop();
  backends.stop();
  process.exit(0);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
