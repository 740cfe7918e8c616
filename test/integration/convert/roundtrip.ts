/**
 * The round trip convert must survive: one gateway serves a set of Ingresses from a folder, another serves
 * what `convert` wrote from them (with the same Services, Secrets and ConfigMaps, and no Ingress) from a
 * folder of its own, each side with its own scripted backend (ingress-annotations/harness.ts) so a
 * request to one side never changes what the other sees. A test sends the same request to both and
 * compares what `observed` reads from the answers.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { translateOptionsOf } from "../../../src/cli/translate-options.ts";
import { parseServeConfig } from "../../../src/config/config.ts";
import { type ConvertResult, convertIngresses } from "../../../src/convert/convert.ts";
import { conversionYaml } from "../../../src/convert/output.ts";
import { loadCase } from "../../golden/load.ts";
import type { Front } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { type CaseResponse, startScriptedBackend } from "../ingress-annotations/harness.ts";

export interface Side {
  /** The port requests go to: the Ingress HTTP listener, or the written Gateway's `http` listener. */
  readonly port: number;
  /** The HTTPS port redirects name on this side. */
  readonly httpsPort: number;
}

export interface RoundTrip {
  readonly ingress: Side;
  readonly gateway: Side;
  readonly conversion: ConvertResult;
  /** convert's YAML, as written to the gateway side's folder. */
  readonly yaml: string;
  stop(): Promise<void>;
}

const gatewayClass = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: gatehouse }
spec: { controllerName: gatehouse.dev/gateway-controller }
`;

/**
 * Both sides on `front`: `manifests(backendPort)` is the Ingress side's folder (its EndpointSlices point at
 * `backendPort`); `flags` are serve flags both sides get (and convert translates with).
 */
export async function startRoundTrip(
  manifests: (backendPort: number) => string,
  front: Front,
  flags: readonly string[] = [],
): Promise<RoundTrip> {
  const backends = [startScriptedBackend(), startScriptedBackend()];
  const [ingressBackend, gatewayBackend] = backends as [
    ReturnType<typeof startScriptedBackend>,
    ReturnType<typeof startScriptedBackend>,
  ];
  const dirs = [
    await mkdtemp(join(tmpdir(), "gatehouse-rt-ingress-")),
    await mkdtemp(join(tmpdir(), "gatehouse-rt-gateway-")),
  ];
  const [ingressDir, gatewayDir] = dirs as [string, string];
  const gateways: RunningGateway[] = [];
  const stop = async () => {
    for (const gw of gateways) await gw.stop({ delayMs: 0 });
    for (const b of backends) b.stop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  };
  try {
    const ingress = { port: await freePort(), httpsPort: await freePort() };
    const gateway = { port: await freePort(), httpsPort: await freePort() };
    await writeFile(join(ingressDir, "ingresses.yaml"), manifests(ingressBackend.port));
    const portFlags = (s: Side) => ["--http-port", String(s.port), "--https-port", String(s.httpsPort)];
    gateways.push(
      (await startTestGateway(["--dir", ingressDir], ["--front", front, ...flags, ...portFlags(ingress)])).gw,
    );
    // convert reads the gateway side's own copy (its backend port), loaded as the folder source loads it.
    const { snapshot } = loadCase(manifests(gatewayBackend.port));
    const config = parseServeConfig(["--dir", ".", ...flags, ...portFlags(gateway)], {});
    const conversion = convertIngresses(snapshot, {
      translate: translateOptionsOf(config, undefined, Date.now()),
    });
    const yaml = conversionYaml(conversion);
    await writeFile(join(gatewayDir, "objects.yaml"), withoutIngresses(manifests(gatewayBackend.port)));
    await writeFile(join(gatewayDir, "converted.yaml"), `${gatewayClass}---\n${yaml}`);
    gateways.push((await startTestGateway(["--dir", gatewayDir], ["--front", front, ...flags])).gw);
    return { ingress, gateway, conversion, yaml, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The documents of a manifest text that are not Ingresses. */
function withoutIngresses(text: string): string {
  return text
    .split(/^---\s*$/m)
    .filter((doc) => !/^kind:\s*Ingress\s*$/m.test(doc))
    .join("---\n");
}

/** What must be the same on both sides: status, what the backend saw, Location, CORS and the challenge. */
export function observed(res: CaseResponse, side: Side): Record<string, unknown> {
  const headers: Record<string, string> = {};
  for (const [name, value] of res.headers)
    if (name.startsWith("access-control-") || name === "www-authenticate") headers[name] = value;
  const location = res.headers.get("location");
  return {
    status: res.status,
    backendPath: res.seen?.path,
    backendHost: res.seen?.headers.host,
    ...(location !== null
      ? {
          location: location
            .replaceAll(`:${side.httpsPort}`, ":<https-port>")
            .replaceAll(`:${side.port}`, ":<http-port>"),
        }
      : {}),
    headers,
  };
}
