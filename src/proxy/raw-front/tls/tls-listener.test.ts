/**
 * The raw front's TLS socket on its own: SNI picks the certificate and rotates in place, ALPN offers h2
 * only when asked, stalled and plaintext handshakes are dropped with a reason, odd SNI names fall back,
 * and client certificates are asked for, verified and exposed (TlsClientSocket) as configured.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { connect as netConnect } from "node:net";
import { type ConnectionOptions, connect, type TLSSocket } from "node:tls";
import type { ClientCertificateValidation } from "../../../model/index.ts";
import { clientCertificate, selfSigned, testAuthority } from "../../testing/certs.ts";
import { TlsClientSocket } from "./tls-client.ts";
import { TlsListener, type TlsListenerOptions } from "./tls-listener.ts";

const a = selfSigned("a.test");
const b = selfSigned("b.test");
const open: TlsListener[] = [];
afterEach(() => {
  for (const l of open.splice(0)) l.close();
});

interface Started {
  readonly listener: TlsListener;
  readonly failures: string[];
  readonly accepted: TlsClientSocket[];
}

/** A listener that answers each read with what the handshake settled. */
function start(extra: Partial<TlsListenerOptions> = {}): Started {
  const failures: string[] = [];
  const accepted: TlsClientSocket[] = [];
  const listener = new TlsListener({
    hostname: "127.0.0.1",
    port: 0,
    name: "test",
    certificates: [a, b],
    http2: false,
    onConnection: (socket, h2) => {
      const t = new TlsClientSocket(socket);
      accepted.push(t);
      socket.on("error", () => {});
      socket.on("data", () => {
        const chain = t.peerCertificates().length;
        t.write(Buffer.from(`h2=${h2} sni=${t.servername} authorized=${t.authorized} chain=${chain}\n`));
      });
    },
    onHandshakeError: (reason) => failures.push(reason),
    ...extra,
  });
  open.push(listener);
  return { listener, failures, accepted };
}

interface Outcome {
  readonly answer?: string;
  readonly cn?: string;
  readonly alpn?: string | false | null;
  readonly error?: string;
}

function ask(port: number, options: ConnectionOptions): Promise<Outcome> {
  return new Promise((resolve) => {
    const s: TLSSocket = connect({ host: "127.0.0.1", port, rejectUnauthorized: false, ...options }, () => {
      s.write("?");
      s.once("data", (d) => {
        resolve({
          answer: String(d).trim(),
          cn: String(s.getPeerCertificate().subject?.CN),
          alpn: s.alpnProtocol,
        });
        s.end();
      });
    });
    s.on("error", (err) => resolve({ error: err.message }));
    s.on("close", () => resolve({ error: "closed" }));
  });
}

/** Sends `bytes` over plain TCP; resolves with what came back once the server closes (or "open" after `waitMs`). */
function plain(port: number, bytes: Buffer, waitMs: number): Promise<string> {
  return new Promise((resolve) => {
    const c = netConnect(port, "127.0.0.1", () => c.write(bytes));
    let got = "";
    c.on("data", (d) => {
      got += d.toString("latin1");
    });
    c.on("error", () => {});
    c.on("close", () => resolve(`closed:${got}`));
    setTimeout(() => {
      c.destroy();
      resolve("open");
    }, waitMs);
  });
}

describe("TlsListener", () => {
  test("SNI picks the certificate; no SNI or an unknown, odd or overlong name gets the first", async () => {
    const { listener } = start();
    const cn = async (servername?: string) => (await ask(listener.port, servername ? { servername } : {})).cn;
    expect(await cn("a.test")).toBe("a.test");
    expect(await cn("B.TEST")).toBe("b.test");
    expect(await cn()).toBe("a.test");
    expect(await cn("unknown.test")).toBe("a.test");
    expect(await cn("bad_name!*.x")).toBe("a.test");
    expect(await cn("x".repeat(5000))).toBe("a.test");
  });

  test("certificates rotate in place: new handshakes get the new one, the port stays the same", async () => {
    const { listener } = start();
    const port = listener.port;
    const swap = listener.prepareCertificates([b, selfSigned("a.test")]);
    expect((await ask(port, { servername: "x.test" })).cn).toBe("a.test");
    swap();
    expect((await ask(port, { servername: "x.test" })).cn).toBe("b.test");
    expect(listener.port).toBe(port);
    expect(() => listener.prepareCertificates([{ ...a, keyPem: "garbage" }])).toThrow();
  });

  test("ALPN: h2 only where HTTP/2 is on; a client offering only h2 is refused otherwise", async () => {
    const h1 = start();
    expect((await ask(h1.listener.port, { ALPNProtocols: ["h2", "http/1.1"] })).answer).toStartWith(
      "h2=false",
    );
    expect((await ask(h1.listener.port, { ALPNProtocols: ["h2"] })).error).toBeDefined();
    expect(h1.failures).toEqual(["alpn"]);
    const h2 = start({ http2: true });
    const got = await ask(h2.listener.port, { ALPNProtocols: ["h2", "http/1.1"] });
    expect([got.answer?.startsWith("h2=true"), got.alpn]).toEqual([true, "h2"]);
    expect((await ask(h2.listener.port, {})).answer).toStartWith("h2=false");
  });

  test("a stalled handshake is dropped after the handshake timeout; plaintext HTTP is closed", async () => {
    const { listener, failures } = start({ handshakeTimeoutMs: 300 });
    const t0 = Date.now();
    expect(await plain(listener.port, Buffer.from([22, 3, 1, 0, 200, 1]), 3000)).toBe("closed:");
    expect(Date.now() - t0).toBeLessThan(2500);
    expect(await plain(listener.port, Buffer.from("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), 3000)).toBe(
      "closed:",
    );
    expect(failures).toEqual(["timeout", "plain_http"]);
    // TLS 1.1 and below are refused.
    const old = await ask(listener.port, { maxVersion: "TLSv1.1", minVersion: "TLSv1" });
    expect(old.error).toBeDefined();
    expect((await ask(listener.port, { servername: "a.test" })).cn).toBe("a.test");
  });

  describe("client certificates", () => {
    const ca = testAuthority("test-ca");
    const other = testAuthority("other-ca");
    const good = clientCertificate(ca, "alice");
    const foreign = clientCertificate(other, "mallory");
    const validation = (mode: ClientCertificateValidation["mode"]): ClientCertificateValidation => ({
      caPem: ca.certPem,
      mode,
    });
    const withCert = (c: { certPem: string; keyPem: string }) => ({ cert: c.certPem, key: c.keyPem });

    test("AllowValidOnly: only a certificate from the CA completes the handshake; the chain is exposed", async () => {
      const { listener, failures } = start({ clientValidation: validation("AllowValidOnly") });
      const ok = await ask(listener.port, { servername: "a.test", ...withCert(good) });
      expect(ok.answer).toBe("h2=false sni=a.test authorized=true chain=2");
      const none = await ask(listener.port, { servername: "a.test" });
      const wrong = await ask(listener.port, { servername: "a.test", ...withCert(foreign) });
      // TLS 1.3 clients learn of the refusal on their first read: either way nothing is answered.
      expect(none.answer).toBeUndefined();
      expect(wrong.answer).toBeUndefined();
      expect(failures.length).toBeGreaterThanOrEqual(2);
    });

    test("AllowInsecureFallback: connections without a valid certificate are served, marked unverified", async () => {
      const { listener } = start({ clientValidation: validation("AllowInsecureFallback") });
      expect((await ask(listener.port, withCert(good))).answer).toEndWith("authorized=true chain=2");
      expect((await ask(listener.port, {})).answer).toEndWith("authorized=false chain=0");
      expect((await ask(listener.port, withCert(foreign))).answer).toEndWith("authorized=false chain=1");
    });

    test("hosts with CAs of their own: a trailing dot still gets the host's; the others trust no root", async () => {
      const { getCACertificates, setDefaultCACertificates } = await import("node:tls");
      const roots = getCACertificates("default");
      // As if `other` were a public root (or in NODE_EXTRA_CA_CERTS): a context without `ca` would trust it.
      setDefaultCACertificates([other.certPem]);
      try {
        const { listener } = start({ certificates: [b, { ...a, clientCAPem: ca.certPem }] });
        const dotted = await ask(listener.port, { servername: "A.test.", ...withCert(good) });
        expect(dotted.answer).toBe("h2=false sni=A.test. authorized=true chain=2");
        const elsewhere = await ask(listener.port, { servername: "b.test", ...withCert(foreign) });
        expect(elsewhere.answer).toContain("sni=b.test authorized=false");
        expect((await ask(listener.port, withCert(foreign))).answer).toContain("authorized=false");
      } finally {
        setDefaultCACertificates(roots);
      }
    });

    test("HTTP/2 on: a name whose context has CAs of its own is offered HTTP/1.1 only", async () => {
      const { listener } = start({ http2: true, certificates: [b, { ...a, clientCAPem: ca.certPem }] });
      const offer = { ALPNProtocols: ["h2", "http/1.1"], ...withCert(good) };
      expect((await ask(listener.port, { servername: "a.test.", ...offer })).alpn).toBe("http/1.1");
      expect((await ask(listener.port, { servername: "b.test", ...offer })).alpn).toBe("h2");
      expect((await ask(listener.port, offer)).alpn).toBe("h2");
      const h2Only = await ask(listener.port, { servername: "a.test", ALPNProtocols: ["h2"] });
      expect(h2Only.answer).toBeUndefined();
    });

    test("without validation no certificate is asked for", async () => {
      const { listener } = start();
      expect((await ask(listener.port, withCert(good))).answer).toEndWith("authorized=false chain=0");
    });
  });
});
