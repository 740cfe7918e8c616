/**
 * ingress-nginx's `ssl-ciphers`, live with the openssl client on both fronts: the annotated Ingress's
 * hosts take a TLS 1.2 CBC suite Gatehouse's own list refuses (and no longer the AEAD one the list leaves
 * out), whether the host has a certificate of its own or is served by the default certificate; a host of
 * another Ingress keeps Gatehouse's list.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { echoServiceYaml, tlsIngressYaml, tlsSecretYaml } from "../tls/fixtures.ts";

/** A CBC suite: outside Gatehouse's default list (ECDHE with AEAD only). */
const CBC = "ECDHE-ECDSA-AES128-SHA";
const AEAD = "ECDHE-ECDSA-AES128-GCM-SHA256";
const ANNOTATION = "nginx.ingress.kubernetes.io/ssl-ciphers";

const manifests = (echoPort: number) =>
  [
    tlsSecretYaml("legacy", selfSigned("legacy.test")),
    tlsSecretYaml("modern", selfSigned("modern.test")),
    tlsIngressYaml("legacy", "legacy.test", [[["legacy.test"], "legacy"]], { [ANNOTATION]: CBC }),
    tlsIngressYaml("nocert", "nocert.test", [], { [ANNOTATION]: CBC }),
    tlsIngressYaml("modern", "modern.test", [[["modern.test"], "modern"]]),
    echoServiceYaml(echoPort),
  ].join("---\n");

forEachFront("ssl-ciphers on an Ingress", (front) => {
  const echo = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("ok") });
  let dir: string;
  let gw: RunningGateway | undefined;
  let httpsPort = 0;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    dir = await mkdtemp(join(tmpdir(), "gatehouse-ssl-ciphers-"));
    await writeFile(join(dir, "all.yaml"), manifests(echo.port as number));
    httpsPort = await freePort();
    ({ gw } = await startTestGateway(["--dir", dir], ["--front", front, "--https-port", String(httpsPort)]));
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    echo.stop(true);
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  /** The TLS 1.2 suite agreed with `servername` offering only `cipher`, or "refused". */
  const handshake = async (servername: string, cipher: string): Promise<string> => {
    // Async spawn: the gateway serves from this process, so a blocking spawn would stall the handshake.
    const p = Bun.spawn(
      ["openssl", "s_client", "-connect", `127.0.0.1:${httpsPort}`, "-servername", servername].concat([
        "-tls1_2",
        "-cipher",
        cipher,
      ]),
      { stdin: "ignore", stdout: "pipe", stderr: "ignore", timeout: 4000 },
    );
    const out = await new Response(p.stdout).text();
    return out.match(/Cipher is ([A-Z0-9-]+)/)?.[1] ?? "refused";
  };

  test("the annotated host with its own certificate takes the listed suite, and only it", async () => {
    expect([await handshake("legacy.test", CBC), await handshake("legacy.test", AEAD)]).toEqual([
      CBC,
      "refused",
    ]);
  });

  test("an annotated host served by the default certificate takes it too", async () => {
    expect(await handshake("nocert.test", CBC)).toBe(CBC);
  });

  test("another Ingress's host keeps Gatehouse's list", async () => {
    expect([await handshake("modern.test", CBC), await handshake("modern.test", AEAD)]).toEqual([
      "refused",
      AEAD,
    ]);
  });
});
