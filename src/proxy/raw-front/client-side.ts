/**
 * The contract between a raw-front connection and whatever serves its current request. The connection
 * (connection.ts) reads heads and bodies and hands each request to an Exchange that dispatch.ts picks;
 * the exchanges (fast, guarded, relayed, h2c) write the answer back through ClientSide. Both sides
 * name only this file, so neither imports the other.
 */
import type { ListenerState } from "../settings.ts";
import type { ByteSink } from "./outbox.ts";

/**
 * What the front needs of a client's transport: a Bun socket (plain HTTP, `Bun.listen`) has this shape,
 * and a node:tls socket is adapted to it (tls/tls-client.ts). `write` takes what it can now and returns
 * how many bytes that was (-1: closed); `drain` tells when to write the rest (Outbox).
 */
export interface FrontSocket extends ByteSink {
  readonly remoteAddress: string;
  readonly remotePort: number;
  /** Closes once written bytes are out. */
  end(): void;
  /** Closes now. */
  terminate(): void;
  /** Seconds without activity before the connection is dropped; 0: never. */
  timeout(seconds: number): void;
  pause(): void;
  resume(): void;
}

/** The TLS side of an HTTPS client connection: what the handshake settled. */
export interface TlsSession {
  /** The SNI name the client asked for ("" without SNI). */
  readonly servername: string;
  /** The client's certificate chain, leaf first, DER; empty when none was asked for or sent. */
  peerCertificates(): readonly Buffer[];
  /** The client's certificate was verified against the listener's CAs (false: none, or it failed). */
  readonly authorized: boolean;
}

/** What serves one request: gets its body, learns about the client's drain and departure. */
export interface Exchange {
  body(buf: Buffer, start: number, end: number): void;
  bodyEnd(): void;
  /** The client can take more response bytes. */
  clientDrained(): void;
  /** The client went away, or sent a malformed body: stop and release everything. */
  abort(): void;
  /** The listener is stopping while this exchange runs: a piped WebSocket is closed (websocket-pipe.ts). */
  drain?(): void;
}

/** Who a connection comes from (client-origin.ts ClientOrigin). */
export interface PeerOrigin {
  /** The socket's address, or the source its PROXY header named; normalised. */
  readonly peer: string;
  /** The peer is one of `--trusted-proxies`: the X-Forwarded-For it sent is believed and passed on. */
  readonly peerTrusted: boolean;
  /** The connection came with a PROXY header: no X-Forwarded-For is believed. */
  readonly viaProxyHeader: boolean;
}

/** The client's connection as an exchange sees it (ClientConnection is the one implementation). */
export interface ClientSide {
  readonly socket: FrontSocket;
  /** Set on HTTPS listeners. */
  readonly tls: TlsSession | undefined;
  readonly state0: ListenerState;
  /** Where the slow path sends requests: the listener's internal Bun.serve (`unix:/path`). */
  readonly internalEndpoint: string;
  /** The current request's client: the peer, or what a trusted peer's X-Forwarded-For names (client-origin.ts). */
  readonly clientIp: string;
  /** The connection's peer and whether it is a trusted proxy. */
  readonly origin: PeerOrigin;
  /** Closed, or closing once queued bytes are out: nothing more can be written. */
  readonly closed: boolean;
  /** Bytes the client sent, as passed on to `pipe` once a tunnel; no byte either way for `idleS` ends it. */
  becomeTunnel(pipe: (buf: Buffer) => void, idleS?: number): void;
  write(bytes: Uint8Array): boolean;
  /** `write` for `length` bytes just built in the Outbox scratch buffer (Outbox.writeScratch). */
  writeScratch(length: number): boolean;
  /** The current response is complete; `close` when the connection cannot carry another. */
  responseDone(close: boolean): void;
  /** Ends the connection once queued bytes are out. */
  closeWhenFlushed(): void;
  /**
   * The request's body is about to be forwarded: a client waiting on `Expect: 100-continue` is told to send
   * it now (once per request; nothing for other requests). Never before: a request answered without its
   * body (404, a guard's 401, a redirect) gets no 100, as RFC 9110 §10.1.1 allows and nginx does.
   */
  bodyWanted(): void;
  /** Answers `status` and closes (malformed request, or no exchange could start). */
  fail(status: number): void;
  /** Stops reading for `reason` (a bit: 1 = the body's destination is backlogged, 2 = pipelining). */
  pause(reason: number): void;
  resume(reason: number): void;
}
