/**
 * The TLS socket of an HTTPS listener on the raw front: a node:tls server (as Bun implements it) that
 * picks each connection's certificate by SNI from per-name contexts (h2/sni.ts: exact names, one-label
 * wildcards, the first certificate as fallback), offers ALPN `h2` only where HTTP/2 is on, and hands
 * each finished handshake to the front: `h2` to the HTTP/2 server, everything else to an HTTP/1.1
 * connection. Chosen over `Bun.listen({ tls })`, which takes one certificate and keeps it across
 * `reload`, and over a `Bun.listen` per certificate behind an SNI peek, which would add a hop
 * (docs/tls.md has the measurements).
 *
 * Certificates rotate in place (`prepareCertificates`): SNICallback reads the current table on every
 * handshake, so no second socket is bound and nothing queued is reset; open connections keep theirs.
 * The client CA bundle (Gateway `spec.tls.frontend`) lives in the same contexts and rotates with them;
 * whether a certificate is asked for and whether a bad one fails the handshake are the server's and
 * fixed for its life (a change of mode opens a new server: listener-identity.ts).
 * A handshake that does not finish within `handshakeTimeoutMs` is dropped (a client that stops
 * mid-handshake holds nothing longer than that).
 */
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { createServer, type Server, type TLSSocket } from "node:tls";
import type { ClientCertificateValidation, TLSCertificate } from "../../../model/index.ts";
import { logger } from "../../../observability/logger.ts";
import { buildSniTable, contextFor, h2ProtocolOptions, type SniTable } from "../../h2/sni.ts";
import type { ConnectionAdmission } from "../admission.ts";

const log = logger.child({ component: "proxy-tls" });

/** What node:tls's ALPNCallback is given. */
interface ClientHello {
  readonly servername: string;
  readonly protocols: string[];
}

/** nginx's `ssl_handshake_timeout` default is 60 s; a client that has not finished in 10 has stalled. */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;

export interface TlsListenerOptions {
  readonly hostname: string;
  readonly port: number;
  /** The listener's name, for logs. */
  readonly name: string;
  readonly certificates: readonly TLSCertificate[];
  /** Offer ALPN `h2` (HTTP/2); otherwise only `http/1.1`. */
  readonly http2: boolean;
  readonly clientValidation?: ClientCertificateValidation;
  readonly handshakeTimeoutMs?: number;
  /**
   * false: bind nothing; connections arrive through `accept` from the passthrough listener that owns the
   * port and hands over every ClientHello no TLSRoute takes (`--enable-ssl-passthrough`). Default true.
   */
  readonly bind?: boolean;
  /** Caps on client connections: one over a cap is closed before its handshake. */
  readonly admission?: ConnectionAdmission;
  /** A connection whose handshake finished, with the protocol ALPN chose. */
  readonly onConnection: (socket: TLSSocket, h2: boolean) => void;
  /** A handshake that failed (bad client, wrong protocol, timeout). */
  readonly onHandshakeError?: (reason: string) => void;
}

/**
 * Whether some SNI entry verifies client certificates with CAs of its own (ingress-nginx auth-tls-secret):
 * the listener then asks every client for one (requestCert is the server's, not a context's) and fails
 * no handshake for it; the routes of those hosts decide (auth/client-certificate.ts), the others ignore it.
 */
export function asksHosts(certs: readonly TLSCertificate[]): boolean {
  return certs.some((c) => c.clientCAPem !== undefined);
}

/**
 * A CA whose private key was destroyed when it was made: it verifies no client certificate. node:tls
 * trusts the system (and NODE_EXTRA_CA_CERTS) roots in a context without `ca`; on a listener that asks
 * for client certificates each context must name its CAs, so the hosts without any verify nothing.
 */
export const NO_CLIENT_CA = `-----BEGIN CERTIFICATE-----
MIIBxjCCAW2gAwIBAgIUc2doCKZJ0WmxCHHsRNLSdz4SWhgwCgYIKoZIzj0EAwIw
ODE2MDQGA1UEAwwtR2F0ZWhvdXNlIHZlcmlmaWVzIG5vIGNsaWVudCBjZXJ0aWZp
Y2F0ZSBoZXJlMCAXDTI2MTEyNTA0NDc1OVoYDzIxMjYxMTAxMDQ0NzU5WjA4MTYw
NAYDVQQDDC1HYXRlaG91c2UgdmVyaWZpZXMgbm8gY2xpZW50IGNlcnRpZmljYXRl
IGhlcmUwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATHZnGhYwJtK48G+Jwi1anZ
UKHwJPYppp9IbipFEptn5+4ycEOOf8x4vFrlpwKGrRn+nxvrB1ARqo//w4wMjIaT
o1MwUTAdBgNVHQ4EFgQUqGI3rptL5/LTwN7dr+eyEOIn1rIwHwYDVR0jBBgwFoAU
qGI3rptL5/LTwN7dr+eyEOIn1rIwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQD
AgNHADBEAiAx9m+JJk0AfMsx0YB6v8iLeN5QGTa+maQaZEVgyhhTFAIgJOhqD6++
sWm/ttG5vd+0pgz9mkF5HFIbxWeYt9AhrxY=
-----END CERTIFICATE-----
`;

/**
 * The per-context options of a listener: the listener's CAs when it validates clients; when only some
 * hosts do (their entries carry their own), NO_CLIENT_CA for every other context and the default one.
 */
function contextOptions(
  v: ClientCertificateValidation | undefined,
  certs: readonly TLSCertificate[],
): { ca?: string } {
  if (v !== undefined) return { ca: v.caPem };
  return asksHosts(certs) ? { ca: NO_CLIENT_CA } : {};
}

export class TlsListener {
  readonly hostname: string;
  readonly port: number;
  private readonly server: Server;
  private sni: SniTable;
  /** The client validation the current contexts carry. */
  private validation: ClientCertificateValidation | undefined;

  /** Binds at once; throws (nothing left open) when the port cannot be bound or a certificate is refused. */
  constructor(private readonly options: TlsListenerOptions) {
    const extra = contextOptions(options.clientValidation, options.certificates);
    this.validation = options.clientValidation;
    this.sni = buildSniTable(options.name, options.certificates, extra);
    const first = options.certificates[0] as TLSCertificate; // buildSniTable refuses an empty list
    const v = options.clientValidation;
    this.server = createServer(
      {
        ...h2ProtocolOptions,
        ...extra,
        // Clients without SNI get the first certificate; SNICallback answers every named handshake.
        cert: first.certPem,
        key: first.keyPem,
        ...(options.http2
          ? { ALPNCallback: (hello: ClientHello) => this.protocolFor(hello) }
          : { ALPNProtocols: ["http/1.1"] }),
        SNICallback: (name, cb) => cb(null, contextFor(this.sni, name)),
        handshakeTimeout: options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
        ...(v !== undefined
          ? { requestCert: true, rejectUnauthorized: v.mode === "AllowValidOnly" }
          : asksHosts(options.certificates)
            ? { requestCert: true, rejectUnauthorized: false }
            : {}),
      },
      (socket) => options.onConnection(socket, socket.alpnProtocol === "h2"),
    );
    const admission = options.admission;
    if (admission !== undefined) {
      // The TCP connection, before any TLS: the cheapest place to refuse it.
      this.server.on("connection", (socket: Socket) => {
        const peer = socket.remoteAddress ?? "";
        if (!admission.admit(peer)) socket.destroy();
        else socket.once("close", () => admission.release(peer));
      });
    }
    this.server.on("tlsClientError", (err: Error, socket: TLSSocket) => {
      options.onHandshakeError?.(handshakeFailure(err));
      socket.destroy();
    });
    this.server.on("error", (err) =>
      log.error("listener error", { listener: options.name, error: err.message }),
    );
    if (options.bind === false) {
      this.hostname = options.hostname;
      this.port = options.port;
      return;
    }
    this.server.listen({ port: options.port, host: options.hostname, reusePort: true });
    // Bun binds synchronously: no address now means the bind failed (the error event follows).
    const addr = this.server.address();
    if (addr === null || typeof addr === "string") {
      this.server.close();
      throw new Error(`HTTPS listener ${options.name}: cannot bind ${options.hostname}:${options.port}`);
    }
    this.hostname = addr.address;
    this.port = addr.port;
  }

  /**
   * Checks `certs` and the client CA bundle (throws on what OpenSSL refuses) and returns the swap to run
   * once the rest of the configuration is in place: new handshakes get the new certificates and are
   * checked against the new CAs, open connections keep theirs. `validation` must keep the mode the
   * server was started with (requestCert and rejectUnauthorized are not per context).
   */
  prepareCertificates(
    certs: readonly TLSCertificate[],
    validation: ClientCertificateValidation | undefined = this.validation,
  ): () => void {
    if ((validation?.mode ?? "") !== (this.options.clientValidation?.mode ?? ""))
      throw new Error(
        `HTTPS listener ${this.options.name}: the client validation mode cannot change in place`,
      );
    if (validation === undefined && asksHosts(certs) !== asksHosts(this.options.certificates))
      throw new Error(
        `HTTPS listener ${this.options.name}: asking for client certificates cannot change in place`,
      );
    const extra = contextOptions(validation, certs);
    const table = buildSniTable(this.options.name, certs, extra);
    const first = certs[0] as TLSCertificate;
    return () => {
      this.sni = table;
      this.validation = validation;
      this.server.setSecureContext({
        ...h2ProtocolOptions,
        ...extra,
        cert: first.certPem,
        key: first.keyPem,
      });
    };
  }

  /**
   * ALPN with HTTP/2 on: `h2` where the client offers it, except for a name whose context carries CAs of
   * its own: those hosts check client certificates per request, which the HTTP/2 server cannot see (it
   * would answer 500), so they speak HTTP/1.1. No protocol in common: the handshake fails, as before.
   */
  private protocolFor({ servername, protocols }: ClientHello): string | undefined {
    const h1Only = this.sni.ownClientCA.has(contextFor(this.sni, servername));
    if (!h1Only && protocols.includes("h2")) return "h2";
    return protocols.includes("http/1.1") ? "http/1.1" : undefined;
  }

  /** Runs a TLS handshake on a connection accepted elsewhere (a passthrough listener's handoff). */
  accept(stream: Duplex): void {
    this.server.emit("connection", stream);
  }

  /** Stops accepting; open connections are the front's to close. */
  close(): void {
    this.server.close();
  }
}

const REASONS: Readonly<Record<string, string>> = {
  ERR_TLS_HANDSHAKE_TIMEOUT: "timeout",
  ERR_SSL_HTTP_REQUEST: "plain_http",
  ERR_SSL_NO_APPLICATION_PROTOCOL: "alpn",
  ECONNRESET: "client_gone",
};

/** A short, stable reason for a failed handshake (metric label and log field). */
export function handshakeFailure(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code ?? "";
  const known = REASONS[code];
  if (known !== undefined) return known;
  if (/VERSION|PROTOCOL/.test(code) || /version/i.test(err.message)) return "protocol_version";
  if (/CERT/.test(code) || /certificate/i.test(err.message)) return "client_certificate";
  return "other";
}
