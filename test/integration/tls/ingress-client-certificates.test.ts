/**
 * ingress-nginx `auth-tls-*` through the whole pipeline (folder → translate → GatewayServer): the Ingress
 * HTTPS listener asks every client for a certificate, each annotated host's SNI entry verifies it with
 * that host's CAs, and the host's routes decide as nginx's server block would (400s, 421 when Host is
 * not the SNI name, the error-page redirect, match-cn, the `ssl-client-*` headers, a forged one replaced).
 * `--front bun` cannot see client certificates: those hosts answer 500 there (never open; docs/http.md),
 * other hosts are served as usual, and a refused configuration is 403 on both.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect as connectHttp2 } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { type RunningGateway, startGateway } from "../../../src/cli/serve.ts";
import { parseServeConfig } from "../../../src/config/config.ts";
import { clientCertificate, selfSigned, testAuthority } from "../../../src/proxy/testing/certs.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { echoServiceYaml, tlsIngressYaml, tlsSecretYaml } from "./fixtures.ts";

const nginx = "nginx.ingress.kubernetes.io/";
const ca = testAuthority("ingress-clients");
const alice = clientCertificate(ca, "alice");
const bob = clientCertificate(ca, "bob");
const stranger = clientCertificate(testAuthority("elsewhere"), "alice");
const expired = clientCertificate(ca, "alice", { expired: true });
const otherCA = testAuthority("other-clients");
const carol = clientCertificate(otherCA, "carol");
type Cert = { certPem: string; keyPem: string };
type Answer = { status: number; location?: string; body: string; echoed?: Record<string, string[]> };

/** One request over TLS: SNI `servername`, Host `host`, an optional client certificate and extra headers. */
function request(
  port: number,
  servername: string,
  host: string,
  cert?: Cert,
  extra = "",
  target = "/p",
): Promise<Answer | string> {
  return new Promise((resolve) => {
    let raw = "";
    const s = connect(
      {
        host: "127.0.0.1",
        port,
        servername,
        rejectUnauthorized: false,
        ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}),
      },
      () => s.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\n${extra}Connection: close\r\n\r\n`),
    );
    s.on("data", (d: Buffer) => {
      raw += d.toString("utf8");
    });
    s.on("error", (err) => resolve(`error: ${err.message}`));
    s.on("close", () => {
      const at = raw.indexOf("\r\n\r\n");
      if (at < 0) return resolve("closed without a response");
      const head = raw.slice(0, at);
      const body = raw.slice(at + 4);
      const location = /\r\nlocation: ([^\r]*)/i.exec(head)?.[1];
      const answer: Answer = { status: Number(head.slice(9, 12)), body, ...(location ? { location } : {}) };
      if (body.startsWith("{"))
        answer.echoed = (JSON.parse(body) as { headers: Record<string, string[]> }).headers;
      resolve(answer);
    });
  });
}

const header = (a: Answer | string, name: string): string | undefined => {
  if (typeof a === "string") return undefined;
  const entry = Object.entries(a.echoed ?? {}).find(([k]) => k.toLowerCase() === name);
  return entry?.[1][0];
};

forEachFront("ingress-nginx auth-tls-*", (front) => {
  let dir: string;
  let echo: EchoServer;
  let gw: RunningGateway;
  let port = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "gatehouse-mtls-"));
    echo = startEchoServer({ service: "echo" });
    const secret = `${nginx}auth-tls-secret`;
    const ingress = (name: string, annotations: Record<string, string>) =>
      tlsIngressYaml(name, `${name}.example`, [[[`${name}.example`], "server"]], annotations);
    const docs = [
      ingress("mtls", {
        [secret]: "demo/client-ca",
        [`${nginx}auth-tls-pass-certificate-to-upstream`]: "true",
      }),
      ingress("optional", { [secret]: "demo/client-ca", [`${nginx}auth-tls-verify-client`]: "optional" }),
      ingress("cn", { [secret]: "demo/client-ca", [`${nginx}auth-tls-match-cn`]: "CN=(alice|carol)$" }),
      ingress("err", {
        [secret]: "demo/client-ca",
        [`${nginx}auth-tls-error-page`]: "https://login.example/cert",
      }),
      ingress("bad", { [secret]: "demo/missing" }),
      ingress("off", {
        [secret]: "demo/client-ca",
        [`${nginx}auth-tls-verify-client`]: "off",
        [`${nginx}auth-tls-match-cn`]: "CN=alice",
      }),
      // Another CA, and CORS: its routes take the raw front's relayed path.
      ingress("other", { [secret]: "demo/other-ca", [`${nginx}enable-cors`]: "true" }),
      ingress("open", {}),
      tlsSecretYaml("server", selfSigned("*.example")),
      `apiVersion: v1\nkind: Secret\nmetadata: { name: client-ca, namespace: demo }\ntype: Opaque\ndata: { ca.crt: ${Buffer.from(ca.certPem).toString("base64")} }\n`,
      `apiVersion: v1\nkind: Secret\nmetadata: { name: other-ca, namespace: demo }\ntype: Opaque\ndata: { ca.crt: ${Buffer.from(otherCA.certPem).toString("base64")} }\n`,
      echoServiceYaml(echo.port),
    ];
    await writeFile(join(dir, "all.yaml"), docs.join("---\n"));
    port = await freePort();
    const args = ["--dir", dir, "--bind", "127.0.0.1", "--admin-port", "0", "--front", front];
    args.push("--http-port", String(await freePort()), "--https-port", String(port));
    gw = await startGateway(
      parseServeConfig(args, { GATEHOUSE_LOG_LEVEL: "error", GATEHOUSE_ACCESS_LOG_SAMPLE: "0" }),
    );
  });

  afterAll(async () => {
    await gw?.stop({ timeoutMs: 1000 });
    await echo?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("hosts without auth-tls are served, with or without a certificate", async () => {
    expect(await request(port, "open.example", "open.example")).toMatchObject({ status: 200 });
    expect(await request(port, "open.example", "open.example", stranger)).toMatchObject({ status: 200 });
  });

  test("a CA Secret that cannot be read: every path of the host answers 403", async () => {
    expect(await request(port, "bad.example", "bad.example", alice)).toMatchObject({ status: 403 });
  });

  test("verify off with match-cn: no certificate is looked at, so the subject is empty: 403", async () => {
    expect(await request(port, "off.example", "off.example", alice)).toMatchObject({
      status: 403,
      body: "client certificate unauthorized\n",
    });
    expect(await request(port, "off.example", "off.example")).toMatchObject({ status: 403 });
  });

  if (front === "bun") {
    test("Bun.serve shows no client certificate: such hosts answer 500 (never open)", async () => {
      expect(await request(port, "mtls.example", "mtls.example", alice)).toMatchObject({ status: 500 });
      expect(await request(port, "optional.example", "optional.example")).toMatchObject({ status: 500 });
    });
    return;
  }

  describe("verify on (the default)", () => {
    test("a certificate from the CA is served; the upstream gets the ssl-client-* headers", async () => {
      const ok = await request(port, "mtls.example", "mtls.example", alice);
      expect(ok).toMatchObject({ status: 200 });
      expect(header(ok, "ssl-client-verify")).toBe("SUCCESS");
      expect(header(ok, "ssl-client-subject-dn")).toBe("CN=alice");
      expect(header(ok, "ssl-client-issuer-dn")).toBe("CN=ingress-clients");
      expect(decodeURIComponent(header(ok, "ssl-client-cert") ?? "")).toBe(alice.certPem);
    });

    test("none, another CA's and an expired one get nginx's 400s", async () => {
      const none = await request(port, "mtls.example", "mtls.example");
      expect(none).toMatchObject({ status: 400, body: "No required SSL certificate was sent\n" });
      for (const cert of [stranger, expired])
        expect(await request(port, "mtls.example", "mtls.example", cert)).toMatchObject({
          status: 400,
          body: "The SSL certificate error\n",
        });
    });

    test("a Host other than the SNI name is 421: the certificate was checked for another host", async () => {
      expect(await request(port, "open.example", "mtls.example", alice)).toMatchObject({ status: 421 });
    });

    test("absolute-form: the host routing used must be the SNI name, on the fast and the relayed path", async () => {
      // Verified by other.example's CA, Host names other.example, the target's authority mtls.example.
      const fast = await request(port, "other.example", "other.example", carol, "", "https://mtls.example/p");
      expect(fast).toMatchObject({ status: 421 });
      const relayed = await request(
        port,
        "mtls.example",
        "mtls.example",
        alice,
        "",
        "https://other.example/p",
      );
      expect(relayed).toMatchObject({ status: 421 });
      // The same hosts as SNI and authority are served.
      expect(
        await request(port, "other.example", "mtls.example", carol, "", "https://other.example/p"),
      ).toMatchObject({ status: 200 });
    });

    test("a trailing dot in SNI and Host is the same host: its own CAs verify", async () => {
      expect(await request(port, "MTLS.example.", "mtls.example.", alice)).toMatchObject({ status: 200 });
      expect(await request(port, "mtls.example.", "mtls.example.", stranger)).toMatchObject({ status: 400 });
      expect(await request(port, "mtls.example.", "mtls.example.", carol)).toMatchObject({ status: 400 });
    });

    test("auth-tls-error-page: refused clients are redirected", async () => {
      const refused = await request(port, "err.example", "err.example", stranger);
      expect(refused).toMatchObject({ status: 302, location: "https://login.example/cert" });
    });
  });

  test("--http2: auth-tls hosts negotiate HTTP/1.1 (and are served), other hosts h2", async () => {
    const h2Port = await freePort();
    const args = [
      "--dir",
      dir,
      "--bind",
      "127.0.0.1",
      "--admin-port",
      "0",
      "--front",
      front,
      "--http2",
      "true",
    ];
    args.push("--http-port", String(await freePort()), "--https-port", String(h2Port));
    const h2gw = await startGateway(
      parseServeConfig(args, { GATEHOUSE_LOG_LEVEL: "error", GATEHOUSE_ACCESS_LOG_SAMPLE: "0" }),
    );
    const alpn = (servername: string) =>
      new Promise<string>((resolve) => {
        const s = connect(
          {
            host: "127.0.0.1",
            port: h2Port,
            servername,
            rejectUnauthorized: false,
            ALPNProtocols: ["h2", "http/1.1"],
          },
          () => {
            resolve(String(s.alpnProtocol));
            s.destroy();
          },
        );
        s.on("error", (err) => resolve(`error: ${err.message}`));
      });
    try {
      expect(await alpn("mtls.example")).toBe("http/1.1");
      expect(await alpn("open.example")).toBe("h2");
      expect(await request(h2Port, "mtls.example", "mtls.example", alice)).toMatchObject({ status: 200 });
      // Coalescing: an h2 connection to open.example (the certificate covers *.example) reused for
      // mtls.example, whose certificate cannot be seen there: 421, so the client dials mtls.example anew.
      const h2 = connectHttp2(`https://127.0.0.1:${h2Port}`, {
        servername: "open.example",
        rejectUnauthorized: false,
      });
      try {
        const status = (authority: string) =>
          new Promise<number | string>((resolve) => {
            const stream = h2.request({ ":path": "/p", ":authority": authority });
            stream.on("response", (headers) => resolve(Number(headers[":status"])));
            stream.on("error", (err) => resolve(`error: ${err.message}`));
            stream.resume();
          });
        expect(await status("mtls.example")).toBe(421);
        expect(await status("optional.example")).toBe(421);
        expect(await status("open.example")).toBe(200);
      } finally {
        h2.close();
      }
    } finally {
      await h2gw.stop({ timeoutMs: 1000 });
    }
  });

  test("optional: none passes as NONE (a forged header replaced); a bad one is still refused", async () => {
    const none = await request(
      port,
      "optional.example",
      "optional.example",
      undefined,
      "ssl-client-verify: SUCCESS\r\nssl-client-subject-dn: CN=admin\r\n",
    );
    expect(none).toMatchObject({ status: 200 });
    expect(header(none, "ssl-client-verify")).toBe("NONE");
    expect(header(none, "ssl-client-subject-dn")).toBeUndefined();
    expect(header(none, "ssl-client-cert")).toBeUndefined();
    expect(await request(port, "optional.example", "optional.example", stranger)).toMatchObject({
      status: 400,
    });
  });

  test("auth-tls-match-cn: only a matching subject is served", async () => {
    expect(await request(port, "cn.example", "cn.example", alice)).toMatchObject({ status: 200 });
    const other = await request(port, "cn.example", "cn.example", bob);
    expect(other).toMatchObject({ status: 403, body: "client certificate unauthorized\n" });
  });
});
