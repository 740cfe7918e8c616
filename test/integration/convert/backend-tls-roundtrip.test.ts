/**
 * `backend-protocol: HTTPS` with `proxy-ssl-secret` and `proxy-ssl-name` through convert, live on both
 * fronts: the Ingress served on one side, what convert wrote (a BackendTLSPolicy and its CA ConfigMap) on
 * the other, the same request to both reaching the same private-CA backend, verified, with the same SNI.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { convertIngresses } from "../../../src/convert/convert.ts";
import { conversionYaml } from "../../../src/convert/output.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { serverCertificate, testAuthority } from "../../../src/proxy/testing/certs.ts";
import { loadCase } from "../../golden/load.ts";
import { annotatedIngressYaml, serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { startTlsEchoServer, type TlsEchoServer } from "../../helpers/tls-echo-server.ts";

const ca = testAuthority("roundtrip-backend-ca");
const server = serverCertificate(ca, { dns: ["api.internal.test"] });
const caSecret = `apiVersion: v1
kind: Secret
metadata: { name: backend-ca, namespace: shop }
type: Opaque
stringData:
  ca.crt: |
${ca.certPem.trimEnd().replace(/^/gm, "    ")}
`;
const gatewayClass = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: gatehouse }
spec: { controllerName: gatehouse.dev/gateway-controller }
`;

forEachFront("backend-protocol HTTPS through convert", (front) => {
  let backend: TlsEchoServer;
  const dirs: string[] = [];
  const gateways: RunningGateway[] = [];
  const ports = { ingress: 0, gateway: 0 };
  let restore: ((line: string) => void) | undefined;
  let yaml = "";

  beforeAll(async () => {
    restore = setLogSink(() => {});
    backend = await startTlsEchoServer(server);
    const shared = [serviceYaml("tls-app", "shop", backend.port), caSecret].join("---\n");
    const ingress = annotatedIngressYaml({
      name: "secure",
      namespace: "shop",
      host: "secure.test",
      service: "tls-app",
      annotations: {
        "backend-protocol": "HTTPS",
        "proxy-ssl-secret": "shop/backend-ca",
        "proxy-ssl-name": "api.internal.test",
      },
    });
    ports.ingress = await freePort();
    ports.gateway = await freePort();
    const conversion = convertIngresses(loadCase(`${ingress}---\n${shared}`).snapshot, {
      translate: { httpPort: ports.gateway, httpsPort: await freePort() },
    });
    yaml = conversionYaml(conversion);
    const sides: [number, string][] = [
      [ports.ingress, `${ingress}---\n${shared}`],
      [ports.gateway, `${gatewayClass}---\n${shared}---\n${yaml}`],
    ];
    for (const [port, text] of sides) {
      const dir = await mkdtemp(join(tmpdir(), "gatehouse-backend-tls-rt-"));
      dirs.push(dir);
      await writeFile(join(dir, "all.yaml"), text);
      const flags = ["--front", front, "--http-port", String(port), "--https-port", String(await freePort())];
      gateways.push((await startTestGateway(["--dir", dir], flags)).gw);
    }
  });

  afterAll(async () => {
    for (const gw of gateways) await gw.stop({ delayMs: 0 });
    await backend?.stop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  test("convert wrote a BackendTLSPolicy and a CA ConfigMap", () => {
    expect(yaml).toContain("kind: BackendTLSPolicy");
    expect(yaml).toContain("hostname: api.internal.test");
    expect(yaml).toContain("kind: ConfigMap");
  });

  test("both sides reach the backend over verified TLS with the same SNI", async () => {
    const seen = [];
    for (const port of [ports.ingress, ports.gateway]) {
      const res = await fetch(`http://127.0.0.1:${port}/x`, { headers: { host: "secure.test" } });
      const body = await res.text();
      seen.push([res.status, res.status === 200 ? JSON.parse(body).tls.serverName : body]);
    }
    expect(seen).toEqual([
      [200, "api.internal.test"],
      [200, "api.internal.test"],
    ]);
  });
});
