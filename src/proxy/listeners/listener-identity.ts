/**
 * What a listener's server was started with, as one string GatewayServer compares on every apply: equal
 * identities keep the server; a change of certificates alone may be swapped in place (node:tls servers);
 * anything else (protocol, client validation, sharing the port with a passthrough listener) needs a new
 * server.
 */
import type { ListenerTable } from "../table.ts";

/**
 * What a listener's server was started with: the protocol, then (HTTPS) what fixes the TLS server's
 * shape (client validation), then the certificates. Equal shapes differ at most in certificates.
 */
export function identityOf(lt: ListenerTable, shared = false): string {
  if (lt.protocol !== "HTTPS" || lt.tls === undefined) return lt.protocol;
  const certs = lt.tls.certificates.map((c) => `${c.hostnames.join(",")}\n${c.certPem}\n${c.keyPem}`);
  const v = lt.tls.clientValidation;
  const shape = `${shared ? "shared" : ""}${v === undefined ? "" : Bun.hash(`${v.mode}\n${v.caPem}`).toString(16)}`;
  return `HTTPS\n${shape}\n${Bun.hash(certs.join("\n")).toString(16)}`;
}

export function sameShape(a: string, b: string): boolean {
  return a.slice(0, a.lastIndexOf("\n")) === b.slice(0, b.lastIndexOf("\n"));
}
