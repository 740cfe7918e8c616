/**
 * A stand-in for upstream's echo-basic in UDP mode (`UDP_ECHO_SERVER`, `conformance/echo-basic/udpechoserver`):
 * each datagram (up to 1024 bytes read, as upstream's buffer) is answered with
 * `{"request":"<payload>","namespace","ingress","service","pod"}`, in Go's field order. Bun's UDP sockets.
 */

export interface UdpEchoOptions {
  readonly namespace?: string;
  readonly ingress?: string;
  readonly service?: string;
  readonly pod?: string;
}

export interface UdpEchoServer {
  readonly port: number;
  /** Datagrams answered so far. */
  readonly datagrams: number;
  stop(): void;
}

export async function startUdpEchoServer(options: UdpEchoOptions = {}): Promise<UdpEchoServer> {
  let datagrams = 0;
  const socket = await Bun.udpSocket({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(s, data, port, address) {
        datagrams++;
        const reply = JSON.stringify({
          request: Buffer.from(data.subarray(0, 1024)).toString("utf8"),
          namespace: options.namespace ?? "",
          ingress: options.ingress ?? "",
          service: options.service ?? "",
          pod: options.pod ?? "",
        });
        s.send(reply, port, address);
      },
    },
  });
  return {
    port: socket.port,
    get datagrams() {
      return datagrams;
    },
    stop: () => socket.close(),
  };
}

/**
 * Send `payload` from a fresh socket and wait for one datagram back (upstream's probe: a new UDP socket
 * per attempt, one read with a deadline). Rejects on timeout.
 */
export async function udpExchange(
  host: string,
  port: number,
  payload: string | Uint8Array,
  timeoutMs: number,
): Promise<Buffer> {
  let settle: (outcome: { reply: Buffer } | { error: string }) => void = () => {};
  const done = new Promise<{ reply: Buffer } | { error: string }>((resolve) => {
    settle = resolve;
  });
  const socket = await Bun.udpSocket({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(_s, data) {
        settle({ reply: Buffer.from(data) });
      },
      // An ICMP port-unreachable comes back as ECONNREFUSED: no reply, as a read timeout is.
      // (Bun calls it with the error alone, whatever its typings say.)
      error(...args: unknown[]) {
        const err = args.find((a) => a && typeof a === "object" && "code" in a) as { code?: string };
        settle({ error: `UDP error: ${err?.code ?? "unknown"}` });
      },
    },
  });
  const timer = setTimeout(() => settle({ error: `no UDP reply within ${timeoutMs} ms` }), timeoutMs);
  try {
    socket.send(payload, port, host);
    const outcome = await done;
    if ("error" in outcome) throw new Error(outcome.error);
    return outcome.reply;
  } finally {
    clearTimeout(timer);
    socket.close();
  }
}
