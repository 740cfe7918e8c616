/**
 * Bad certificate input on Gateway HTTPS listeners, through the whole pipeline (folder → translate →
 * GatewayServer), on both fronts (the raw front's node:tls listener; Bun.serve or node:http2), with and
 * without HTTP/2: a Secret that is missing, of the
 * wrong type, with garbage PEM, with a key that does not match, or expired gives its listener
 * ResolvedRefs=False / InvalidCertificateRef, while the good listener on the same port keeps serving; a
 * good Secret turned bad at run time (and back) never stops the process.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningGateway, startGateway } from "../../../src/cli/serve.ts";
import { parseServeConfig } from "../../../src/config/config.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { peerCommonName, selfSigned } from "../../../src/proxy/testing/certs.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { gatewayClassYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { rawRequest } from "../../helpers/raw-http.ts";
import { echoServiceYaml, expiredSelfSigned, tlsSecretYaml } from "./fixtures.ts";

const bad = ["missing", "opaque", "garbage", "mismatch", "expired"] as const;

function gatewayYaml(port: number): string {
  const listener = (name: string) =>
    `    - { name: ${name}, hostname: ${name}.example, port: ${port}, protocol: HTTPS, ` +
    `tls: { mode: Terminate, certificateRefs: [{ name: ${name} }] } }\n`;
  return `${gatewayClassYaml}---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: demo }
spec:
  gatewayClassName: gatehouse
  listeners:
${["good", ...bad].map(listener).join("")}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: all, namespace: demo }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ backendRefs: [{ name: echo, port: 80 }] }]
`;
}

const goodCert = selfSigned("good.example");
const secrets = (good: string) =>
  [
    good,
    tlsSecretYaml("opaque", selfSigned("opaque.example"), "Opaque"),
    tlsSecretYaml("garbage", { certPem: "-----BEGIN CERTIFICATE-----\nnot base64!", keyPem: "junk" }),
    tlsSecretYaml("mismatch", { certPem: selfSigned("mismatch.example").certPem, keyPem: goodCert.keyPem }),
    tlsSecretYaml("expired", expiredSelfSigned("expired.example")),
  ].join("---\n");

forEachFront("Gateway HTTPS listeners with bad Secrets", (front) => {
  describe.each([false, true])("--http2 %p", (http2) => {
    let dir: string;
    let echo: EchoServer;
    let gw: RunningGateway;
    let port = 0;
    let restoreSink: ((line: string) => void) | undefined;

    beforeAll(async () => {
      restoreSink = setLogSink(() => {}); // the bad Secrets are logged as errors, on purpose
      dir = await mkdtemp(join(tmpdir(), "gatehouse-tls-gateway-"));
      echo = startEchoServer({ service: "echo" });
      port = await freePort();
      await writeFile(
        join(dir, "routes.yaml"),
        [gatewayYaml(port), echoServiceYaml(echo.port)].join("---\n"),
      );
      await writeFile(join(dir, "secrets.yaml"), secrets(tlsSecretYaml("good", goodCert)));
      const args = ["--dir", dir, "--bind", "127.0.0.1", "--admin-port", "0", "--debounce-ms", "0"];
      args.push("--http-port", String(await freePort()), "--https-port", String(await freePort()));
      args.push("--http2", String(http2), "--front", front);
      gw = await startGateway(
        parseServeConfig(args, { GATEHOUSE_LOG_LEVEL: "error", GATEHOUSE_ACCESS_LOG_SAMPLE: "0" }),
      );
    });

    afterAll(async () => {
      await gw?.stop({ timeoutMs: 1000 });
      await echo?.stop();
      await rm(dir, { recursive: true, force: true });
      if (restoreSink) setLogSink(restoreSink);
    });

    const get = (host: string) =>
      rawRequest({
        host: "127.0.0.1",
        port,
        target: "/",
        headers: [["Host", host]],
        tls: { servername: host },
      });

    const resolvedRefs = () => {
      const gateway = gw.state.statuses.find((s) => s.target.kind === "Gateway" && s.target.name === "gw");
      const listeners = (gateway?.status.listeners ?? []) as {
        name: string;
        conditions: { type: string; status: string; reason: string }[];
      }[];
      return Object.fromEntries(
        listeners.map((l) => {
          const c = l.conditions.find((x) => x.type === "ResolvedRefs");
          return [l.name, `${c?.status}/${c?.reason}`];
        }),
      );
    };

    test("each bad Secret costs only its own listener", async () => {
      const expected: Record<string, string> = { good: "True/ResolvedRefs" };
      for (const name of bad) expected[name] = "False/InvalidCertificateRef";
      expect(resolvedRefs()).toEqual(expected);
      expect(await peerCommonName(port, "good.example")).toBe("good.example");
      // A name no listener on the port covers gets the gateway's default certificate, never the first
      // listener's (which would tell a stranger which hosts live here).
      expect(await peerCommonName(port, "unknown.example")).toBe("gatehouse.invalid");
      const res = await get("good.example");
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ host: "good.example", service: "echo" });
    });

    test("a good Secret turned to garbage at run time, then fixed: no crash, served again", async () => {
      let applied = gw.state.problems;
      await writeFile(
        join(dir, "secrets.yaml"),
        secrets(tlsSecretYaml("good", { certPem: "x", keyPem: "y" })),
      );
      for (let i = 0; i < 100 && gw.state.problems === applied; i++) await Bun.sleep(20);
      expect(resolvedRefs().good).toBe("False/InvalidCertificateRef");
      // No listener on the port has a certificate left: nothing is served there, and nothing crashed.
      await expect(get("good.example")).rejects.toThrow();
      applied = gw.state.problems;
      await writeFile(join(dir, "secrets.yaml"), secrets(tlsSecretYaml("good", goodCert)));
      for (let i = 0; i < 100 && gw.state.problems === applied; i++) await Bun.sleep(20);
      expect(resolvedRefs().good).toBe("True/ResolvedRefs");
      expect((await get("good.example")).status).toBe(200);
    });
  });
});
