/**
 * What a listener's server was started with, as one string GatewayServer compares on every apply: equal
 * identities keep the server; a change of certificates or of the client CA bundle alone may be swapped in
 * place (node:tls servers: the contexts carry both); anything else (protocol, whether client certificates
 * are asked for and in which mode, sharing the port with a passthrough listener) needs a new server.
 */
import type { ListenerTable } from "../table.ts";

/**
 * What a listener's server was started with: the protocol, then (HTTPS) what fixes the TLS server's
 * shape (the client validation mode), then the certificates and client CAs. Equal shapes differ at most
 * in those.
 */
export function identityOf(lt: ListenerTable, shared = false): string {
  if (lt.protocol !== "HTTPS" || lt.tls === undefined) return lt.protocol;
  const certs = lt.tls.certificates.map(
    (c) => `${c.hostnames.join(",")}\n${c.certPem}\n${c.keyPem}\n${c.clientCAPem ?? ""}`,
  );
  // Some host's SNI entry asks for client certificates: the server asks every client (tls-listener.ts).
  const asks = lt.tls.certificates.some((c) => c.clientCAPem !== undefined) ? "asks" : "";
  const v = lt.tls.clientValidation;
  const shape = `${shared ? "shared" : ""}${v === undefined ? asks : v.mode}`;
  const contexts = v === undefined ? certs : [...certs, v.caPem];
  return `HTTPS\n${shape}\n${Bun.hash(contexts.join("\n")).toString(16)}`;
}

export function sameShape(a: string, b: string): boolean {
  return a.slice(0, a.lastIndexOf("\n")) === b.slice(0, b.lastIndexOf("\n"));
}
