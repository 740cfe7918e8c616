/**
 * What a listener's server was started with, as one string GatewayServer compares on every apply: equal
 * identities keep the server; a change of certificates or of the client CA bundle alone may be swapped in
 * place (node:tls servers: the contexts carry both); anything else (protocol, whether client certificates
 * are asked for and in which mode, sharing the port with a passthrough listener, whether a listener serves
 * GRPCRoutes where that changes its server) needs a new server.
 */
import type { ListenerTable } from "../table.ts";

/**
 * What a listener's server was started with: the protocol, then (HTTPS) what fixes the TLS server's
 * shape (the client validation mode), then the certificates and client CAs. Equal shapes differ at most
 * in those.
 */
export function identityOf(lt: ListenerTable, shared = false, front: "raw" | "bun" = "raw"): string {
  if (lt.protocol !== "HTTPS" || lt.tls === undefined)
    // On --front bun a plain listener serving GRPCRoutes has its own server (bun-front.ts).
    return front === "bun" && lt.protocol === "HTTP" && servesGrpc(lt) ? "HTTP\ngrpc" : lt.protocol;
  // HTTP/2 is offered (ALPN) for a listener that serves GRPCRoutes whatever --http2 says: a new server.
  const h2 = servesGrpc(lt) ? "h2" : "";
  const certs = lt.tls.certificates.map(
    (c) => `${c.hostnames.join(",")}\n${c.certPem}\n${c.keyPem}\n${c.clientCAPem ?? ""}`,
  );
  // Some host's SNI entry asks for client certificates: the server asks every client (tls-listener.ts).
  const asks = lt.tls.certificates.some((c) => c.clientCAPem !== undefined) ? "asks" : "";
  const v = lt.tls.clientValidation;
  const shape = `${shared ? "shared" : ""}${h2}${v === undefined ? asks : v.mode}`;
  const contexts = v === undefined ? certs : [...certs, v.caPem];
  return `HTTPS\n${shape}\n${Bun.hash(contexts.join("\n")).toString(16)}`;
}

export function sameShape(a: string, b: string): boolean {
  return a.slice(0, a.lastIndexOf("\n")) === b.slice(0, b.lastIndexOf("\n"));
}

/**
 * Whether a listener serves routes of a GRPCRoute. gRPC has no HTTP/1.1 form, and GRPCRoute requires an
 * HTTPS listener to accept HTTP/2 by ALPN (v1.6.1), so such an HTTPS listener offers `h2` whatever
 * `--http2` says (server.ts). Read once per apply and listener.
 */
export function servesGrpc(lt: ListenerTable): boolean {
  const { exact, oneLabel, anyLabels, any } = lt.hosts;
  const hosts = [...exact.values(), ...oneLabel.values(), ...anyLabels.values(), ...(any ? [any] : [])];
  return hosts.some((vh) => vh.routes.some((r) => r.source.kind === "GRPCRoute"));
}

/**
 * Whether an HTTPS listener's server offers HTTP/2: with `--http2`, or when it serves GRPCRoutes. On
 * `--front bun` that server is node:http2, which cannot verify client certificates: a listener that must
 * verify them stays on Bun.serve (HTTP/1.1) unless `--http2` asked otherwise (then it is not opened).
 */
export function offersHttp2(lt: ListenerTable, http2Flag: boolean, front: "raw" | "bun"): boolean {
  if (http2Flag) return true;
  return servesGrpc(lt) && (front === "raw" || lt.tls?.clientValidation === undefined);
}

/** Why the GRPCRoutes of a listener get no HTTP/2 (so no gRPC call) there; undefined when they do. */
export function http2Refusal(
  lt: ListenerTable,
  http2Flag: boolean,
  front: "raw" | "bun",
): string | undefined {
  if (lt.protocol !== "HTTPS" || offersHttp2(lt, http2Flag, front) || !servesGrpc(lt)) return undefined;
  return "GRPCRoutes on an HTTPS listener that verifies client certificates get no HTTP/2 with --front bun";
}
