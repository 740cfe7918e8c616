/**
 * A stand-in for upstream's echo-basic HTTPS port (`TLS_SERVER_CERT`/`TLS_SERVER_PRIVKEY`, port 8443): the
 * echo JSON of the HTTP port plus `tls` (version, peer certificates as Go's `pem.Encode` writes them, the SNI
 * the client sent, ALPN, cipher suite), so a conformance case can check what the gateway sent to a TLS
 * backend. With `clientCA`, a client certificate is verified if one is given (Go's VerifyClientCertIfGiven):
 * none is fine, an unverifiable one ends the connection. node:tls with a small HTTP/1.1 loop: Bun.serve
 * and Bun's node:https expose no TLS state to the handler.
 */
import { createServer, type TLSSocket } from "node:tls";

export interface TlsEchoOptions {
  readonly certPem: string;
  readonly keyPem: string;
  /** PEM of the CA(s) that verify client certificates (upstream `TLS_CLIENT_CACERTS`). */
  readonly clientCA?: string;
  readonly namespace?: string;
  readonly ingress?: string;
  readonly service?: string;
  readonly pod?: string;
  /** The highest TLS version offered (a backend stuck on TLS 1.2). */
  readonly maxVersion?: "TLSv1.2" | "TLSv1.3";
}

export interface TlsEchoServer {
  readonly port: number;
  readonly requests: number;
  /** TLS connections accepted (handshakes that completed). */
  readonly connections: number;
  stop(): Promise<void>;
}

export async function startTlsEchoServer(options: TlsEchoOptions): Promise<TlsEchoServer> {
  let requests = 0;
  let connections = 0;
  let port = 0;
  const sockets = new Set<TLSSocket>();
  const server = createServer(
    {
      cert: options.certPem,
      key: options.keyPem,
      minVersion: "TLSv1.2",
      ...(options.maxVersion ? { maxVersion: options.maxVersion } : {}),
      ALPNProtocols: ["http/1.1"],
      ...(options.clientCA ? { ca: options.clientCA, requestCert: true, rejectUnauthorized: false } : {}),
    },
    (socket) => {
      // Given but not verified by the CA: refuse, as Go's VerifyClientCertIfGiven does in the handshake.
      const given = Object.keys(socket.getPeerCertificate() ?? {}).length > 0;
      if (options.clientCA && given && !socket.authorized) return socket.destroy();
      connections++;
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => socket.destroy());
      serveHttp1(socket, (head) => {
        requests++;
        return JSON.stringify(
          {
            path: head.target,
            host: head.headers.find(([n]) => n.toLowerCase() === "host")?.[1] ?? "",
            method: head.method,
            proto: head.proto,
            headers: goHeaders(head.headers),
            namespace: options.namespace ?? "",
            ingress: options.ingress ?? "",
            service: options.service ?? "",
            pod: options.pod ?? "",
            httpPort: String(port),
            tls: tlsAssertions(socket),
          },
          null,
          1,
        );
      });
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    get requests() {
      return requests;
    },
    get connections() {
      return connections;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

interface Head {
  readonly method: string;
  readonly target: string;
  readonly proto: string;
  readonly headers: readonly (readonly [string, string])[];
}

/**
 * A minimal HTTP/1.1 server loop on one socket (Bun's node:https hides the TLS socket from the handler):
 * heads in order, Content-Length bodies skipped, keep-alive unless `Connection: close`. A chunked body
 * or a head it cannot read closes the connection: gateways send neither to this echo in the suites.
 */
function serveHttp1(socket: TLSSocket, answer: (head: Head) => string): void {
  let buffered = Buffer.alloc(0);
  let skip = 0;
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      if (skip) {
        const n = Math.min(skip, buffered.length);
        buffered = buffered.subarray(n);
        skip -= n;
        if (skip) return;
      }
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return;
      const lines = buffered.subarray(0, end).toString("latin1").split("\r\n");
      buffered = buffered.subarray(end + 4);
      const [method, target, proto] = (lines[0] ?? "").split(" ");
      const headers = lines.slice(1).map((l) => {
        const colon = l.indexOf(":");
        return [l.slice(0, colon), l.slice(colon + 1).trim()] as const;
      });
      const value = (name: string) => headers.find(([n]) => n.toLowerCase() === name)?.[1];
      if (!method || !target || !proto || value("transfer-encoding")) return void socket.destroy();
      skip = Number(value("content-length") ?? 0);
      const body = answer({ method, target, proto, headers });
      const close = value("connection")?.toLowerCase() === "close";
      socket.write(
        `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n${close ? "Connection: close\r\n" : ""}\r\n${body}`,
      );
      if (close) return void socket.end();
    }
  });
}

/** echo-basic's `tls` object for this connection. */
export function tlsAssertions(socket: TLSSocket) {
  const peer = socket.getPeerCertificate();
  return {
    version: socket.getProtocol() ?? "",
    peerCertificates: peer?.raw ? [goPem(peer.raw)] : [],
    serverName: (socket as TLSSocket & { servername?: string | false }).servername || "",
    negotiatedProtocol: socket.alpnProtocol || "",
    cipherSuite: socket.getCipher()?.standardName ?? "",
  };
}

/** Go's `pem.Encode` of a CERTIFICATE block: base64 in 64-column lines, a trailing newline. */
export function goPem(der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}

/** Go's `http.Header`: canonical names, every value, Host left out. */
function goHeaders(raw: readonly (readonly [string, string])[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [n, v] of raw) {
    const name = n.toLowerCase();
    if (name === "host") continue;
    const canonical = name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
    out[canonical] = [...(out[canonical] ?? []), v];
  }
  return out;
}
