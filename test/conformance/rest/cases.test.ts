/**
 * The case kinds against the echo backends directly (no gateway in between), so the harness is shown to
 * pass a backend that answers as upstream expects and to fail one that does not: a red row in the table
 * then means the gateway, not the harness.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { startDnsResponder } from "../../helpers/dns-responder.ts";
import { startEchoServer } from "../../helpers/echo-server.ts";
import { grpcEchoService, startGrpcEchoServer } from "../../helpers/grpc-echo-server.ts";
import { startTcpEchoServer, tcpWelcome } from "../../helpers/tcp-echo-server.ts";
import { startTlsEchoServer } from "../../helpers/tls-echo-server.ts";
import { startUdpEchoServer } from "../../helpers/udp-echo-server.ts";
import type { RestCaseContext } from "./case-context.ts";
import { runRestCase } from "./cases.ts";
import { makeCertificates } from "./certificates.ts";
import type { CertificateSpec, RestCase } from "./data.ts";

const ns = "gateway-conformance-infra";
const spec = (ref: string, order: number, over: Partial<CertificateSpec>): CertificateSpec => ({
  ref,
  kind: "Secret",
  subject: { CN: "default" },
  serialNumber: "random 128-bit",
  isCA: false,
  keyUsage: ["KeyEncipherment", "DigitalSignature"],
  extKeyUsage: ["ServerAuth"],
  creationOrder: order,
  ...over,
});
const certs = await makeCertificates([
  spec(`${ns}/ca`, 1, {
    kind: "ConfigMap",
    isCA: true,
    serialNumber: 2024,
    keyUsage: ["DigitalSignature", "CertSign"],
    extKeyUsage: ["ClientAuth", "ServerAuth"],
  }),
  spec(`${ns}/server`, 2, { issuer: `${ns}/ca`, dnsNames: ["abc.example.com"] }),
  spec(`${ns}/client`, 3, { issuer: `${ns}/ca`, extKeyUsage: ["ClientAuth"] }),
]);
const pem = (ref: string) => certs.get(`${ns}/${ref}`) as { certPem: string; keyPem: string };
const ctx: RestCaseContext = { address: "127.0.0.1", certs, deadlineMs: 800, retryMs: 20 };
/** The transport fields as the data sets them: HTTP kinds a protocol, gRPC GRPC_H2C, L4 kinds none. */
const transport = (kind: string) =>
  ["http", "httpFailure", "tlsRequestFailure"].includes(kind)
    ? { scheme: "http", protocol: "HTTP" }
    : kind.startsWith("grpc")
      ? { protocol: "GRPC_H2C" }
      : {};
const make = (kind: string, port: number, over: Partial<RestCase>): RestCase =>
  ({
    name: kind,
    kind,
    target: { gateway: `${ns}/gw`, port, ...transport(kind) },
    request: { method: "GET", host: null, path: "/", headers: {} },
    expected: {},
    ...over,
  }) as RestCase;

describe("grpc", async () => {
  const server = await startGrpcEchoServer({ namespace: ns, pod: "grpc-infra-backend-v1-local-0" });
  afterAll(() => server.stop());
  const grpc = (method: string, expected: Record<string, unknown>) =>
    make("grpc", server.port, {
      request: { method, authority: "grpc.example.com", metadata: { color: "orange" } } as never,
      expected: { responseMetadata: null, namespace: ns, backend: null, ...expected },
    });
  const fqm = `/${grpcEchoService}/Echo`;

  test("an OK answer from the right pod passes; the wrong backend fails", async () => {
    expect(await runRestCase(grpc("Echo", { code: 0, fullyQualifiedMethod: fqm }), ctx)).toBe("");
    const wrong = grpc("Echo", { code: 0, fullyQualifiedMethod: fqm, backend: "grpc-infra-backend-v2" });
    expect(await runRestCase(wrong, ctx)).toContain("want grpc-infra-backend-v2-*");
  });

  test("code 12 for an unimplemented method", async () => {
    expect(await runRestCase(grpc("EchoThree", { code: 12, fullyQualifiedMethod: "" }), ctx)).toBe("");
  });
});

describe("tcpEcho and tcpEchoSamples", async () => {
  const server = await startTcpEchoServer({ namespace: ns, pod: "tcp-backend-local-0", tls: pem("server") });
  afterAll(() => server.stop());
  const expected = { welcome: tcpWelcome, ping: "PONG\n", backend: "tcp-backend", namespace: ns };

  test("plain: every line as expected", async () => {
    const c = make("tcpEcho", server.port, { expected: { ...expected, backendIsTLS: false } });
    expect(await runRestCase(c, ctx)).toBe("");
  });

  test("over TLS: trusted by the CA, the SNI echoed; a wrong backendIsTLS fails", async () => {
    const target = {
      tls: true,
      serverName: "abc.example.com",
      trustedCAConfigMap: `${ns}/ca`,
    } as unknown as RestCase["target"];
    const c = (backendIsTLS: boolean) =>
      make("tcpEcho", server.tlsPort as number, {
        target: { ...make("tcpEcho", 0, {}).target, ...target, port: server.tlsPort as number },
        expected: { ...expected, backendIsTLS, sni: "abc.example.com" },
      });
    expect(await runRestCase(c(true), ctx)).toBe("");
    expect(await runRestCase(c(false), ctx)).toContain("IS_TLS");
  });

  test("samples: every connection from the allowed pod", async () => {
    const c = (podPrefix: string) =>
      make("tcpEchoSamples", server.port, {
        expected: { samples: 5, perRequestTimeoutSeconds: 2, podPrefix, forbiddenPodPrefix: "other-" },
      });
    expect(await runRestCase(c("tcp-backend-"), ctx)).toBe("");
    expect(await runRestCase(c("tcp-attach-"), ctx)).toContain("sample 1");
  });
});

describe("udpEcho, udpEchoSamples and dnsQuery", async () => {
  const udp = await startUdpEchoServer({ namespace: ns, service: "udp-svc", pod: "udp-backend-v1-ab-cd" });
  const dns = await startDnsResponder();
  afterAll(() => {
    udp.stop();
    dns.stop();
  });
  const echo = (expected: Record<string, unknown>) =>
    make("udpEcho", udp.port, { request: { payload: "hi" } as never, expected });

  test("the service and namespace must match; null accepts any reply", async () => {
    expect(await runRestCase(echo({ service: "udp-svc", namespace: ns }), ctx)).toBe("");
    expect(await runRestCase(echo({ service: null, namespace: null }), ctx)).toBe("");
    expect(await runRestCase(echo({ service: "other", namespace: null }), ctx)).toContain("service udp-svc");
  });

  test("samples name the deployment of each replying pod", async () => {
    const c = make("udpEchoSamples", udp.port, {
      request: { payload: "x\n" } as never,
      expected: { probesPerRound: 3, backend: "udp-backend-v1" },
    });
    expect(await runRestCase(c, ctx)).toBe("");
  });

  test("a DNS reply passes; no responder fails within the deadline", async () => {
    const q = { question: "foo.bar.com.", type: "A" } as never;
    expect(
      await runRestCase(make("dnsQuery", dns.port, { request: q, expected: { anyResponse: true } }), ctx),
    ).toBe("");
    const silent = make("dnsQuery", udp.port + 1, { request: q, expected: { anyResponse: true } });
    expect(await runRestCase(silent, { ...ctx, deadlineMs: 200 })).toContain("no DNS reply");
  });
});

describe("http over TLS, httpFailure, tlsRequestFailure, tlsConnectionRejected", async () => {
  const tls = await startTlsEchoServer({
    ...pem("server"),
    clientCA: pem("ca").certPem,
    namespace: ns,
    pod: "tls-backend-local-0",
  });
  const http = startEchoServer({ namespace: ns, pod: "infra-backend-v1-local-0" });
  afterAll(async () => {
    await tls.stop();
    await http.stop();
  });
  const https = (over: Record<string, unknown>, expected: Record<string, unknown>) =>
    make("http", tls.port, {
      target: {
        gateway: `${ns}/gw`,
        port: tls.port,
        scheme: "https",
        protocol: "HTTPS",
        serverName: "abc.example.com",
        trustedServerCertificate: `${ns}/server`,
        ...over,
      },
      request: { method: "GET", host: "abc.example.com", path: "/", headers: {} },
      expected: { statusCodes: [200], backend: "tls-backend", namespace: ns, ...expected },
    });

  test("the SNI and client certificate the echo saw, and a requested client certificate, pass", async () => {
    const c = https(
      { clientCertificate: `${ns}/client` },
      {
        clientCertificateRequested: true,
        backendRequest: {
          method: "GET",
          host: "abc.example.com",
          path: "/",
          headers: {},
          sni: "abc.example.com",
          clientCertificatePemFrom: `${ns}/client`,
        },
      },
    );
    expect(await runRestCase(c, ctx)).toBe("");
  });

  test("a leaf trusted as itself (Go's root pool) passes; another SNI fails the SAN check", async () => {
    expect(await runRestCase(https({}, {}), ctx)).toBe("");
    expect(await runRestCase(https({ serverName: "other.example.com" }, {}), ctx)).toContain("not other");
  });

  test("httpFailure: failure answers in a row pass, a 200 fails at once", async () => {
    const failing = (path: string) =>
      make("httpFailure", http.port, {
        request: { method: "GET", host: "x", path, headers: {} },
        expected: { requiredConsecutiveFailures: 5, failIfStatus: 200, ignoredStatusCodes: [408, 504] },
      });
    expect(await runRestCase(failing("/status/500"), ctx)).toBe("");
    expect(await runRestCase(failing("/"), ctx)).toContain("reached a backend");
  });

  test("tlsRequestFailure: an HTTP answer fails; a refused certificate is a transport error", async () => {
    const c = (over: Record<string, unknown>) =>
      make("tlsRequestFailure", tls.port, { ...https(over, {}), kind: "tlsRequestFailure", expected: {} });
    expect(await runRestCase(c({}), ctx)).toContain("got an HTTP answer");
    expect(await runRestCase(c({ serverName: "nope.example.com" }), ctx)).toBe("");
  });

  test("tlsConnectionRejected: a connection closed in the handshake is; a completed one, plain HTTP are not", async () => {
    const c = (port: number) =>
      make("tlsConnectionRejected", port, {
        target: { ...make("tlsConnectionRejected", 0, {}).target, port, serverName: "abc.example.com" },
      });
    const closer = createServer((s) => s.destroy());
    await new Promise<void>((r) => closer.listen(0, "127.0.0.1", () => r()));
    const port = (closer.address() as { port: number }).port;
    try {
      expect(await runRestCase(c(port), ctx)).toBe("");
    } finally {
      closer.close();
    }
    expect(await runRestCase(c(tls.port), { ...ctx, deadlineMs: 200 })).toContain("never rejected");
    expect(await runRestCase(c(http.port), { ...ctx, deadlineMs: 200 })).toContain("never rejected");
  });
});

describe("what the harness does not know fails", () => {
  test("an unknown case kind", async () => {
    expect(await runRestCase(make("quicEcho", 1, {}), ctx)).toContain("unknown case kind quicEcho");
  });

  test("a transport the kind does not speak", async () => {
    const c = make("grpc", 1, {});
    expect(
      await runRestCase({ ...c, target: { ...c.target, protocol: "GRPC_TLS" } as never }, ctx),
    ).toContain("target.protocol GRPC_TLS");
  });

  test("an expected field no kind checks", async () => {
    const c = make("udpEcho", 1, { expected: { service: null, namespace: null, latencyMs: 5 } });
    expect(await runRestCase(c, ctx)).toContain("unknown expected field(s) latencyMs");
  });
});
