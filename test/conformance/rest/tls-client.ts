/**
 * The TLS side of the rest cases: an HTTPS request that can present a client certificate (the first file's
 * client has none), one handshake probe for `tlsConnectionRejected`, and whether a server asks for a
 * client certificate (`clientCertificateRequested`: upstream counts calls of Go's GetClientCertificate
 * hook; Node exposes no CertificateRequest, so `openssl s_client` reports it, as "Requested Signature
 * Algorithms").
 */
import { X509Certificate } from "node:crypto";
import { connect, type TLSSocket } from "node:tls";
import { parseResponse } from "../../helpers/raw-http.ts";
import type { Reply } from "../gateway-api-client.ts";
import { goServerIdentity } from "../gateway-api-client.ts";

export interface TlsDial {
  readonly address: string;
  readonly port: number;
  readonly serverName?: string;
  /** PEM the client trusts; absent: the system roots. */
  readonly ca?: string;
  readonly clientCert?: { readonly certPem: string; readonly keyPem: string };
  readonly timeoutMs: number;
}

/**
 * Open a TLS connection and call `onSecure` once the server is trusted as Go's client would: a chain to a
 * root in `ca`, or a presented leaf that is itself in `ca` (Go accepts a leaf in its root pool; OpenSSL
 * does not without PARTIAL_CHAIN, which Node cannot set), and, with a server name, a SAN matching it.
 */
function open(dial: TlsDial, onSecure: (socket: TLSSocket) => void): TLSSocket {
  const socket = connect(
    {
      host: dial.address,
      port: dial.port,
      minVersion: "TLSv1.2",
      ALPNProtocols: ["http/1.1"],
      ...(dial.serverName ? { servername: dial.serverName } : {}),
      ...(dial.ca ? { ca: dial.ca, rejectUnauthorized: false } : {}),
      ...(dial.clientCert ? { cert: dial.clientCert.certPem, key: dial.clientCert.keyPem } : {}),
    },
    () => {
      const problem = dial.ca ? untrusted(socket, dial.ca, dial.serverName) : "";
      if (problem) socket.destroy(new Error(problem));
      else onSecure(socket);
    },
  );
  return socket;
}

/** Why the peer is not trusted ("" when it is). */
function untrusted(socket: TLSSocket, ca: string, serverName: string | undefined): string {
  const peer = socket.getPeerCertificate();
  if (!peer?.raw) return "the server presented no certificate";
  const pinned = (ca.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []).some((pem) =>
    new X509Certificate(pem).raw.equals(peer.raw),
  );
  if (!socket.authorized && !pinned) return `certificate not trusted: ${socket.authorizationError}`;
  const identity = serverName ? goServerIdentity(serverName, peer) : undefined;
  return identity ? identity.message : "";
}

/** One HTTP/1.1 request over TLS on a fresh connection; rejects on any transport error. */
export function tlsHttpRequest(
  dial: TlsDial,
  method: string,
  target: string,
  headers: readonly (readonly [string, string])[],
): Promise<Reply> {
  const head = `${method} ${target} HTTP/1.1\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join("")}Connection: close\r\n\r\n`;
  const host = headers.find(([n]) => n.toLowerCase() === "host")?.[1] ?? dial.address;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = open(dial, (s) => s.write(head));
    socket.setTimeout(dial.timeoutMs, () => socket.destroy(new Error("TLS request timed out")));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      try {
        const res = parseResponse(Buffer.concat(chunks));
        const grouped: Record<string, string[]> = {};
        for (const [n, v] of res.headerList)
          grouped[n.toLowerCase()] = [...(grouped[n.toLowerCase()] ?? []), v];
        resolve({ status: res.status, headers: grouped, body: res.body, url: `https://${host}${target}` });
      } catch (err) {
        reject(err);
      }
    });
  });
}

/** How one handshake attempt ended. */
export type HandshakeEnd = "completed" | "rejected" | "verify-failed" | "dial-failed";

/**
 * upstream's connection-rejection probe: `rejected` is EOF, unexpected EOF or a reset during the handshake
 * (what a gateway does with an SNI it has no route for); a certificate error or a dial error is not.
 */
export function tlsHandshake(dial: TlsDial): Promise<{ end: HandshakeEnd; detail: string }> {
  return new Promise((resolve) => {
    const socket = open(dial, (s) => {
      resolve({ end: "completed", detail: `handshake completed (${s.getProtocol()})` });
      s.destroy();
    });
    socket.setTimeout(dial.timeoutMs, () => {
      resolve({ end: "dial-failed", detail: "handshake timed out" });
      socket.destroy();
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      const text = `${err.code ?? ""} ${err.message}`;
      const end: HandshakeEnd = /ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL/.test(text)
        ? "dial-failed"
        : /ECONNRESET|EOF|socket hang up|disconnected before secure TLS/i.test(text)
          ? "rejected"
          : "verify-failed";
      resolve({ end, detail: text.trim() });
    });
    socket.on("close", () => resolve({ end: "rejected", detail: "closed during the handshake (EOF)" }));
  });
}

/** Whether the server at `dial` sends a CertificateRequest in its handshake (openssl s_client's report). */
export async function clientCertificateRequested(dial: TlsDial): Promise<boolean> {
  const args = ["s_client", "-connect", `${dial.address}:${dial.port}`];
  if (dial.serverName) args.push("-servername", dial.serverName);
  const once = async (version: string[]) => {
    const p = Bun.spawn(["openssl", ...args, ...version], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "ignore",
    });
    const timer = setTimeout(() => p.kill(), dial.timeoutMs);
    const out = await new Response(p.stdout).text();
    clearTimeout(timer);
    return /^(Requested Signature Algorithms|Client Certificate Types)/m.test(out);
  };
  return (await once(["-tls1_3"])) || (await once(["-tls1_2"]));
}
