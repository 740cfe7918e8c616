/**
 * An in-process gateway for integration tests: loopback only, a free traffic port, the admin listener on
 * an ephemeral port, and a short debounce so changes show up quickly. `source` is `["--dir", DIR]` or
 * `["--kube", "--kubeconfig", FILE]`; `extra` adds flags (later ones win).
 */
import { type RunningGateway, startGateway } from "../../src/cli/serve.ts";
import { parseServeConfig } from "../../src/config/config.ts";
import { freePort } from "./ports.ts";

export interface TestGateway {
  readonly gw: RunningGateway;
  /** The HTTP port Ingress routes are served on. */
  readonly port: number;
}

export async function startTestGateway(
  source: readonly string[],
  extra: readonly string[] = [],
  debounceMs = 5,
): Promise<TestGateway> {
  const port = await freePort();
  const args = [
    ...source,
    ...["--bind", "127.0.0.1", "--http-port", String(port), "--https-port", String(await freePort())],
    ...["--admin-port", "0", "--debounce-ms", String(debounceMs)],
    ...extra,
  ];
  return { gw: await startGateway(parseServeConfig(args, {})), port };
}
