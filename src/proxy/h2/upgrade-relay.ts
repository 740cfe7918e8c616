/**
 * WebSocket (and any other HTTP/1.1 `Upgrade`) on an HTTP/2-capable HTTPS listener. The WebSocket proxy
 * (request/websocket/relay.ts) is built on Bun.serve's `upgrade()`, which node:http2's HTTP/1.1 fallback does not
 * have; so the decrypted upgrade request and everything after it are relayed byte for byte to a private
 * Bun.serve of the same listener app on a unix socket, started on the first upgrade. The client's
 * address travels in RELAYED_CLIENT_HEADER (any copy the client sent is dropped first), the same
 * hand-over the raw-socket front uses (client-address.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import type { ServeOptions, Server } from "bun";
import { RELAYED_CLIENT_HEADER } from "../request/client-address.ts";
import type { ProxiedSocket } from "../request/websocket/relay.ts";

/** Bun.serve options of the private server, without an address (it gets a unix socket). */
export type RelayServeOptions = Omit<
  ServeOptions<ProxiedSocket>,
  "hostname" | "port" | "unix" | "reusePort" | "tls"
>;

export class UpgradeRelay {
  private server: Server<ProxiedSocket> | undefined;
  private dir = "";
  private path = "";
  private readonly tunnels = new Set<Duplex>();

  constructor(private readonly options: RelayServeOptions) {}

  /** Relays one upgrade request (`head`: bytes the client sent after its request head). */
  relay(req: IncomingMessage, client: Duplex, clientAddress: string, head: Buffer): void {
    const path = this.endpoint();
    const upstream = connect(path);
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    const raw = req.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i] as string;
      if (name.toLowerCase() !== RELAYED_CLIENT_HEADER) lines.push(`${name}: ${raw[i + 1]}`);
    }
    lines.push(`${RELAYED_CLIENT_HEADER}: ${clientAddress}`, "", "");
    upstream.write(lines.join("\r\n"));
    if (head.length > 0) upstream.write(head);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.tunnels.delete(client);
    };
    this.tunnels.add(client);
    client.on("error", end);
    client.on("close", end);
    upstream.on("error", end);
    upstream.on("close", end);
  }

  /** Stops the private server; `now` also cuts the tunnels (otherwise its WebSocket close frames end them). */
  async stop(now: boolean): Promise<void> {
    if (now) for (const t of this.tunnels) t.destroy();
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) await server.stop(now);
    if (this.dir !== "") rmSync(this.dir, { recursive: true, force: true });
  }

  private endpoint(): string {
    if (this.server === undefined) {
      this.dir = mkdtempSync(join(tmpdir(), "gatehouse-h2-upgrade-"));
      this.path = join(this.dir, "internal.sock");
      this.server = Bun.serve<ProxiedSocket>({
        ...this.options,
        unix: this.path,
      } as ServeOptions<ProxiedSocket>);
    }
    return this.path;
  }
}
