/**
 * A stand-in for upstream's echo-basic in TCP mode (`TCP_ECHO_SERVER`, `conformance/echo-basic/tcpserver`):
 * on accept (after the TLS handshake on the TLS port) it writes `Gateway API Test TCP Server\n`, then answers
 * lines: `TEST` → the pod context as one JSON line (with `isTLS` and, over TLS, the handshake's version,
 * SNI, ALPN and cipher), `IS_TLS` → `true`/`false`, `PING` → `PONG`; other lines are ignored, as upstream's.
 * The TLS port (upstream 8443, MinVersion 1.2) runs only when a certificate is given.
 */
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";

export const tcpWelcome = "Gateway API Test TCP Server\n";

export interface TcpEchoOptions {
  readonly namespace?: string;
  readonly ingress?: string;
  readonly service?: string;
  readonly pod?: string;
  /** Serve a TLS port too, with this certificate. */
  readonly tls?: { readonly certPem: string; readonly keyPem: string };
}

export interface TcpEchoServer {
  readonly port: number;
  /** The TLS port, when a certificate was given. */
  readonly tlsPort?: number;
  stop(): Promise<void>;
}

export async function startTcpEchoServer(options: TcpEchoOptions = {}): Promise<TcpEchoServer> {
  const context = {
    namespace: options.namespace ?? "",
    ingress: options.ingress ?? "",
    service: options.service ?? "",
    pod: options.pod ?? "",
    tcpport: "",
    tlsport: "",
  };
  const sockets = new Set<Socket>();
  const handle = (socket: Socket, tls: TLSSocket | undefined) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    const assertions = {
      ...context,
      isTLS: tls !== undefined,
      ...(tls
        ? {
            tls: {
              version: tls.getProtocol() ?? "",
              serverName: (tls as TLSSocket & { servername?: string | false }).servername || "",
              negotiatedProtocol: tls.alpnProtocol || "",
              curves: "",
              cipherSuite: tls.getCipher()?.standardName ?? "",
            },
          }
        : {}),
    };
    socket.write(tcpWelcome);
    let buffered = "";
    socket.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      let nl = buffered.indexOf("\n");
      while (nl >= 0) {
        const line = buffered.slice(0, nl).replace(/\r$/, "");
        buffered = buffered.slice(nl + 1);
        if (line === "TEST") socket.write(`${JSON.stringify(assertions)}\n`);
        else if (line === "IS_TLS") socket.write(`${tls !== undefined}\n`);
        else if (line === "PING") socket.write("PONG\n");
        nl = buffered.indexOf("\n");
      }
    });
  };
  const plain = createTcpServer((s) => handle(s, undefined));
  const port = await listen(plain);
  context.tcpport = String(port);
  let secure: Server | undefined;
  let tlsPort: number | undefined;
  if (options.tls) {
    secure = createTlsServer(
      { cert: options.tls.certPem, key: options.tls.keyPem, minVersion: "TLSv1.2" },
      (s) => handle(s, s),
    );
    tlsPort = await listen(secure);
    context.tlsport = String(tlsPort);
  }
  return {
    port,
    ...(tlsPort !== undefined ? { tlsPort } : {}),
    async stop() {
      for (const s of sockets) s.destroy();
      await Promise.all([plain, secure].map((s) => (s ? new Promise((r) => s.close(() => r(null))) : null)));
    },
  };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : 0);
    });
  });
}
