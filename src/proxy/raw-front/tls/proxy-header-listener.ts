/**
 * The socket of an HTTPS listener that reads PROXY headers (`--proxy-protocol`): the header comes before
 * the ClientHello, so a plain `Bun.listen` socket reads it (client-origin.ts: only from a trusted proxy,
 * bounded, within PROXY_HEADER_TIMEOUT_SECONDS), then hands every later byte to the listener's TLS server
 * as a stream (passthrough/handoff.ts, as a shared passthrough port does) whose address is the client the
 * header named. The TLS server then runs the handshake, its timeout and the connection caps as on a
 * socket of its own; what it writes goes back with backpressure both ways.
 */
import type { Socket, TCPSocketListener, TCPSocketListenOptions } from "bun";
import { HandedClient } from "../../passthrough/handoff.ts";
import { type ListenerState, proxyHeaderSenders } from "../../settings.ts";
import {
  afterProxyHeader,
  awaitProxyHeader,
  ClientOrigin,
  PROXY_HEADER_LATE,
  refuseProxied,
} from "../client-origin.ts";

interface Pending {
  readonly origin: ClientOrigin;
  readonly socket: Socket<Pending>;
  handed?: HandedClient;
}

export class ProxyHeaderListener {
  private readonly listener: TCPSocketListener<Pending>;

  constructor(
    hostname: string,
    port: number,
    private readonly state: ListenerState,
    /** The TLS server that takes the connection once its header is read (TlsListener.accept). */
    private readonly handoff: (stream: HandedClient) => void,
  ) {
    // Bun.listen honours reusePort (raw-front/front.ts measured it) though its types omit it.
    const options: TCPSocketListenOptions<Pending> & { reusePort: boolean } = {
      hostname,
      port,
      reusePort: true,
      // A FIN from the client reaches the TLS server as the stream's end, not as a close.
      allowHalfOpen: true,
      data: undefined as unknown as Pending,
      socket: {
        open: (s) => {
          s.data = { origin: new ClientOrigin(s, undefined, proxyHeaderSenders(state.settings)), socket: s };
          awaitProxyHeader(s.data, state);
        },
        data: (s, chunk) => this.fromClient(s.data, chunk),
        drain: (s) => s.data.handed?.drained(),
        end: (s) => {
          if (s.data.handed !== undefined) s.data.handed.push(null);
          else s.end();
        },
        close: (s) => {
          s.data?.handed?.destroy();
        },
        error: (s) => {
          s.data?.handed?.destroy();
        },
        // Only set while the header is awaited (the TLS server keeps its own clocks after).
        timeout: (s) => refuseProxied(s.data, state, PROXY_HEADER_LATE),
      },
    };
    this.listener = Bun.listen<Pending>(options);
  }

  get hostname(): string {
    return this.listener.hostname;
  }

  get port(): number {
    return this.listener.port;
  }

  /** Stops accepting; connections already handed over are the TLS server's. */
  stop(): void {
    this.listener.stop(false);
  }

  private fromClient(p: Pending, chunk: Uint8Array): void {
    if (p.handed !== undefined) {
      p.handed.fromClient(chunk);
      return;
    }
    const rest = afterProxyHeader(p, chunk, this.state);
    if (rest === undefined) return;
    const s = p.socket;
    // The TLS server keeps its own clocks (handshake, idle) on the stream.
    s.timeout(0);
    const stream = new HandedClient({
      write: (data) => s.write(data),
      end: () => s.end(),
      pause: () => s.pause(),
      resume: () => s.resume(),
      remoteAddress: p.origin.peer,
      remotePort: s.remotePort,
    });
    p.handed = stream;
    stream.on("error", () => {}); // the TLS server reports and closes; the socket closes with it
    if (rest.length > 0) stream.fromClient(rest);
    this.handoff(stream);
  }
}
