/**
 * A raw-front connection that opened with the HTTP/2 preface (h2c prior knowledge), as the byte stream
 * node:http2 serves (h2/session-server.ts): every client byte, the preface included, is pushed into
 * `stream`; what the HTTP/2 session writes goes out through the connection's Outbox, with backpressure
 * both ways (the socket pauses while the session has not read, a write completes once the client took
 * it). The client's address rides on the stream itself, read from the accepted socket, so nothing a
 * client sends can change it. Idle rules: any byte either way restarts the listener's idle timer.
 */
import { Duplex } from "node:stream";
import type { PeerSocket } from "../h2/bridge.ts";
import type { ClientSide, Exchange } from "./client-side.ts";

/** The client's connection as node:http2 sees it: a Duplex that also names the peer. */
export class ClientStream extends Duplex implements PeerSocket {
  remoteAddress: string | undefined;
  remotePort: number | undefined;
  remoteFamily: string | undefined;
}

export class H2cLink implements Exchange {
  readonly stream: ClientStream;
  private pendingWrite: ((err?: Error | null) => void) | undefined;

  constructor(private readonly conn: ClientSide) {
    const idle = conn.state0.settings.idleTimeoutSeconds;
    this.stream = new ClientStream({
      read: () => conn.resume(1),
      write: (chunk: Buffer, _enc, done) => {
        conn.socket.timeout(idle);
        if (conn.write(chunk)) done();
        else if (conn.closed) done(new Error("client connection closed"));
        else this.pendingWrite = done;
      },
      // The session ended (GOAWAY sent, or the client's protocol error): close once its last bytes are out.
      final: (done) => {
        conn.closeWhenFlushed();
        done();
      },
      destroy: (err, done) => {
        conn.closeWhenFlushed();
        done(err);
      },
    });
    // The peer: the app reads a trusted peer's X-Forwarded-For per request, as on every path.
    const ip = conn.origin.peer;
    this.stream.remoteAddress = ip;
    this.stream.remotePort = conn.socket.remotePort;
    this.stream.remoteFamily = ip.includes(":") ? "IPv6" : "IPv4";
  }

  /** Client bytes, from the preface on. */
  data(buf: Buffer): void {
    if (this.stream.destroyed) return;
    this.conn.socket.timeout(this.conn.state0.settings.idleTimeoutSeconds);
    if (!this.stream.push(buf)) this.conn.pause(1);
  }

  body(): void {}

  bodyEnd(): void {}

  clientDrained(): void {
    const done = this.pendingWrite;
    this.pendingWrite = undefined;
    done?.();
  }

  /** The client went away (or the front is cutting connections): the session ends with it. */
  abort(): void {
    this.pendingWrite = undefined;
    this.stream.destroy();
  }
}
