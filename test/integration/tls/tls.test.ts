/**
 * Ingress TLS through the whole pipeline (folder → translate → GatewayServer): SNI picks each host's
 * certificate (wildcards included), SNI misses get the generated default certificate, plain HTTP to a TLS
 * host is redirected (308; `force-ssl-redirect` and `ssl-redirect: "false"` as ingress-nginx), a broken
 * Secret costs only its host's certificate, only TLS 1.2/1.3 with modern ciphers are accepted, and
 * WebSockets work over HTTPS. Run twice: HTTPS listeners on Bun.serve (HTTP/1.1, the default) and on
 * node:http2 (`--http2 true`, ALPN h2 and HTTP/1.1 on one port), which must behave the same; and each
 * on both fronts, since the redirect is served by the plain-HTTP listener.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect as connectH2 } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningGateway, startGateway } from "../../../src/cli/serve.ts";
import { parseServeConfig } from "../../../src/config/config.ts";
import { peerCommonName, selfSigned } from "../../../src/proxy/testing/certs.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { rawRequest } from "../../helpers/raw-http.ts";
import { echoServiceYaml, tlsIngressYaml, tlsSecretYaml } from "./fixtures.ts";

const openssl = Bun.which("openssl");
const nginx = "nginx.ingress.kubernetes.io/";

forEachFront("Ingress TLS", (front) => {
  describe.each([false, true])("HTTPS listeners, --http2 %p", (http2) => {
    let dir: string;
    let echo: EchoServer;
    let gw: RunningGateway;
    const ports = { http: 0, https: 0 };

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "gatehouse-tls-"));
      echo = startEchoServer({ service: "echo" });
      const docs = [
        tlsIngressYaml("secure", "secure.example", [[["secure.example"], "secure"]]),
        tlsIngressYaml("wild", "a.wild.example", [[[], "wildcard"]]),
        tlsIngressYaml("plain", "plain.example", []),
        tlsIngressYaml("broken", "broken.example", [[["broken.example"], "broken"]]),
        tlsIngressYaml("forced", "forced.example", [], { [`${nginx}force-ssl-redirect`]: "true" }),
        tlsIngressYaml("optout", "optout.example", [[["optout.example"], "optout"]], {
          [`${nginx}ssl-redirect`]: "false",
        }),
        tlsSecretYaml("optout", selfSigned("optout.example")),
        tlsSecretYaml("secure", selfSigned("secure.example")),
        tlsSecretYaml("wildcard", selfSigned("*.wild.example")),
        tlsSecretYaml("broken", { certPem: "-----BEGIN CERTIFICATE-----\ngarbage", keyPem: "nope" }),
        echoServiceYaml(echo.port),
      ];
      await writeFile(join(dir, "all.yaml"), docs.join("---\n"));
      ports.http = await freePort();
      ports.https = await freePort();
      const args = ["--dir", dir, "--bind", "127.0.0.1", "--admin-port", "0", "--http2", String(http2)];
      args.push("--front", front);
      args.push("--http-port", String(ports.http), "--https-port", String(ports.https));
      gw = await startGateway(
        parseServeConfig(args, { GATEHOUSE_LOG_LEVEL: "error", GATEHOUSE_ACCESS_LOG_SAMPLE: "0" }),
      );
    });

    afterAll(async () => {
      await gw?.stop({ timeoutMs: 1000 });
      await echo?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    const https = (host: string, target = "/") =>
      rawRequest({
        host: "127.0.0.1",
        port: ports.https,
        target,
        headers: [["Host", host]],
        tls: { servername: host },
      });

    test("SNI picks each host's certificate; a wildcard covers one label; misses get the default", async () => {
      expect(await peerCommonName(ports.https, "secure.example")).toBe("secure.example");
      expect(await peerCommonName(ports.https, "a.wild.example")).toBe("*.wild.example");
      expect(await peerCommonName(ports.https, "x.y.wild.example")).toBe("gatehouse.invalid");
      expect(await peerCommonName(ports.https, "unknown.example")).toBe("gatehouse.invalid");
      expect(await peerCommonName(ports.https, "broken.example")).toBe("gatehouse.invalid");
    });

    test("TLS hosts and plain hosts are served over HTTPS", async () => {
      for (const host of ["secure.example", "a.wild.example", "plain.example", "broken.example"]) {
        const res = await https(host, "/x?y=1");
        expect(res.status).toBe(200);
        expect(JSON.parse(res.body)).toMatchObject({ host, path: "/x?y=1", service: "echo" });
      }
      expect((await https("nothing.example")).status).toBe(404);
    });

    test("plain HTTP to a TLS host gets 308 to https on the HTTPS port; other hosts are served", async () => {
      const get = (host: string) =>
        rawRequest({ host: "127.0.0.1", port: ports.http, target: "/a?b=c", headers: [["Host", host]] });
      const redirected = await get("secure.example");
      expect(redirected.status).toBe(308);
      expect(redirected.headers.location).toBe(`https://secure.example:${ports.https}/a?b=c`);
      expect((await get("a.wild.example")).status).toBe(308);
      // force-ssl-redirect redirects a host without a certificate; ssl-redirect "false" keeps plain HTTP.
      const forced = await get("forced.example");
      expect([forced.status, forced.headers.location]).toEqual([
        308,
        `https://forced.example:${ports.https}/a?b=c`,
      ]);
      expect((await get("optout.example")).status).toBe(200);
      expect(await peerCommonName(ports.https, "optout.example")).toBe("optout.example");
      // No certificate of its own (plain) or an unusable one (broken): no redirect.
      expect((await get("plain.example")).status).toBe(200);
      expect((await get("broken.example")).status).toBe(200);
      const problem = gw.state.problems.find((p) => p.object.name === "broken");
      expect(problem?.reason).toBe("InvalidTLSSecret");
      expect(problem?.message).toContain("Secret demo/broken");
    });

    test.skipIf(!openssl)("only TLS 1.2 and 1.3 with modern ciphers are accepted", async () => {
      // Async spawn: the gateway serves from this process, so a blocking spawn would stall the handshake.
      const handshake = async (...flags: string[]) => {
        const p = Bun.spawn(
          [
            "openssl",
            "s_client",
            "-connect",
            `127.0.0.1:${ports.https}`,
            "-servername",
            "secure.example",
          ].concat(flags),
          { stdin: "ignore", stdout: "pipe", stderr: "ignore", timeout: 4000 },
        );
        const out = await new Response(p.stdout).text();
        return out.match(/New, (TLSv[\d.]+), Cipher/)?.[1] ?? "refused";
      };
      expect(await handshake("-tls1_3")).toBe("TLSv1.3");
      expect(await handshake("-tls1_2")).toBe("TLSv1.2");
      expect(await handshake("-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0")).toBe("refused");
      expect(await handshake("-tls1", "-cipher", "DEFAULT@SECLEVEL=0")).toBe("refused");
      // A TLS 1.2 suite without AEAD (CBC) is refused.
      expect(await handshake("-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA")).toBe("refused");
    });

    test("WebSocket over HTTPS (HTTP/1.1 Upgrade) is proxied", async () => {
      const ws = new WebSocket(`wss://127.0.0.1:${ports.https}/ws`, {
        headers: { host: "secure.example" },
        tls: { rejectUnauthorized: false },
      } as unknown as string[]);
      const echoed = await new Promise<string>((resolve, reject) => {
        ws.onopen = () => ws.send("ping over tls");
        ws.onmessage = (e) => resolve(String(e.data));
        ws.onerror = () => reject(new Error("websocket failed"));
        setTimeout(() => reject(new Error("websocket timed out")), 3000);
      });
      ws.close();
      expect(echoed).toBe("ping over tls");
    });

    test.skipIf(!http2)("HTTP/2 (ALPN h2) and HTTP/1.1 share the port; bodies stream both ways", async () => {
      const session = connectH2(`https://127.0.0.1:${ports.https}`, {
        servername: "secure.example",
        rejectUnauthorized: false,
      });
      try {
        const ask = (method: string, path: string, body?: string) =>
          new Promise<{ status: number; text: string }>((resolve, reject) => {
            const stream = session.request({
              ":method": method,
              ":path": path,
              ":authority": "secure.example",
              ...(body === undefined ? {} : { "content-length": String(body.length) }),
            });
            let status = 0;
            let text = "";
            stream.on("response", (h) => {
              status = Number(h[":status"]);
            });
            stream.setEncoding("utf8");
            stream.on("data", (d: string) => {
              text += d;
            });
            stream.on("end", () => resolve({ status, text }));
            stream.on("error", reject);
            stream.end(body);
          });
        const [a, b] = await Promise.all([ask("GET", "/h2?x=1"), ask("POST", "/post", "x".repeat(100_000))]);
        expect(session.alpnProtocol).toBe("h2");
        expect(a.status).toBe(200);
        expect(JSON.parse(a.text)).toMatchObject({ host: "secure.example", path: "/h2?x=1", method: "GET" });
        expect(b.status).toBe(200);
        const posted = JSON.parse(b.text);
        expect(posted).toMatchObject({ method: "POST", path: "/post", proto: "HTTP/1.1" });
        // The whole body reached the upstream; the client address came from the HTTP/2 session's socket.
        expect(posted.headers).toMatchObject({
          "Content-Length": ["100000"],
          "X-Forwarded-For": ["127.0.0.1"],
          "X-Forwarded-Proto": ["https"],
        });
        expect((await ask("GET", "/", undefined)).status).toBe(200);
      } finally {
        session.close();
      }
      // The same port still answers HTTP/1.1 clients (ALPN http/1.1 or none).
      expect((await https("plain.example", "/h1")).status).toBe(200);
    });
  });
});
