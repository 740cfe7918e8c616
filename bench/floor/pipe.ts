/**
 * Floor row of the proxy bench: a Bun byte relay. Each client connection gets its own upstream connection
 * and bytes are passed on unread, both ways. No HTTP parsing, routing, pooling or time limits: the most
 * any proxy written on Bun's sockets can do on this machine, so the distance between it and nginx is
 * what Bun itself costs, and the distance between it and Gatehouse is what our per-request work costs.
 * Not a proxy to run. Usage: bun bench/floor/pipe.ts UPSTREAM_PORT PORT
 */
import type { Socket, TCPSocketListenOptions } from "bun";

const upstreamPort = Number(process.argv[2]);
const port = Number(process.argv[3]);

interface Side {
  peer: Socket<Side> | undefined;
  /** Bytes the client sent before its upstream connection opened. */
  early: Uint8Array[];
}

// Bun.listen honours reusePort though its types omit it (as src/proxy/raw-front/front.ts notes).
const options: TCPSocketListenOptions<Side> & { reusePort: boolean } = {
  hostname: "127.0.0.1",
  port,
  // N processes share the port, as `--workers N` and nginx's workers do.
  reusePort: true,
  data: undefined as unknown as Side,
  socket: {
    open(client) {
      client.data = { peer: undefined, early: [] };
      void Bun.connect<Side>({
        hostname: "127.0.0.1",
        port: upstreamPort,
        data: { peer: client, early: [] },
        socket: {
          open(up) {
            client.data.peer = up;
            for (const b of client.data.early) up.write(b);
            client.data.early = [];
          },
          data: (up, chunk) => {
            up.data.peer?.write(chunk);
          },
          close: (up) => {
            up.data.peer?.end();
          },
          error: () => {},
        },
      }).catch(() => client.end());
    },
    data(client, chunk) {
      if (client.data.peer === undefined) client.data.early.push(chunk);
      else client.data.peer.write(chunk);
    },
    close: (client) => {
      client.data.peer?.end();
    },
    error: () => {},
  },
};
Bun.listen<Side>(options);
