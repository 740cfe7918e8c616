/**
 * HTTP/2 on connections the raw front accepted: cleartext with prior knowledge (h2c, RFC 9113 §3.3), which
 * the front recognises by the connection preface and hands over as a Duplex (raw-front/h2c-handoff.ts),
 * or TLS where ALPN chose `h2` (raw-front/tls/). This node:http2 server, which never listens itself, runs
 * one session on each and sends every stream through the listener app (respond.ts), the same request
 * path as Bun.serve. In process, so the client's address comes from the accepted socket and needs no
 * header. Over TLS, a request whose `:authority` belongs to another listener than the handshake's SNI
 * gets 421 (misdirected.ts), as on the node:http2 HTTPS listener (listener.ts).
 *
 * `close(now)`: GOAWAY to every session (streams in flight finish, then each session ends its
 * connection), or with `now` every session is destroyed. Sessions that start afterwards get GOAWAY.
 */

import {
  createServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from "node:http2";
import type { Duplex } from "node:stream";
import { logger } from "../../observability/logger.ts";
import type { ListenerApp } from "../listeners/app.ts";
import { bindServername } from "../request/client-tls.ts";
import type { ListenerState } from "../settings.ts";
import { type PeerSocket, serverFacade, writeResponse } from "./bridge.ts";
import { misdirectedOn, misdirectedResponse } from "./misdirected.ts";
import { type AppTarget, respondThroughApp } from "./respond.ts";

const log = logger.child({ component: "proxy-h2c" });

export class H2SessionServer {
  pendingRequests = 0;
  private readonly server: Http2Server;
  private readonly sessions = new Set<ServerHttp2Session>();
  private readonly peers = new WeakMap<Request, PeerSocket>();
  private readonly target: AppTarget;
  private stopping = false;

  constructor(
    private readonly state: ListenerState,
    app: ListenerApp,
    private readonly scheme: "http" | "https",
  ) {
    this.server = createServer((req, res) => this.serve(req, res));
    this.target = {
      app,
      state,
      facade: serverFacade((r) => this.peers.get(r)),
      scheme,
      bind: () => {},
    };
    this.server.on("session", (s: ServerHttp2Session) => this.track(s));
    this.server.on("error", (err: Error) =>
      log.error("h2c error", { listener: state.table.name, error: err.message }),
    );
  }

  /** Serves HTTP/2 on `transport`, which starts with the client's connection preface. */
  accept(transport: Duplex & PeerSocket): void {
    this.server.emit("connection", transport);
  }

  close(now: boolean): void {
    this.stopping = true;
    for (const s of this.sessions) {
      if (now) s.destroy();
      else s.close();
    }
  }

  private track(s: ServerHttp2Session): void {
    this.sessions.add(s);
    s.on("close", () => this.sessions.delete(s));
    s.on("error", () => {}); // a reset or misbehaving client: the session closes and is untracked above
    if (this.stopping) s.close();
  }

  private serve(req: Http2ServerRequest, res: Http2ServerResponse): void {
    const peer = req.stream.session?.socket as PeerSocket | undefined;
    const authority = req.headers[":authority"] ?? req.headers.host ?? "";
    // Aborted when the client goes away first: cancels the upstream request and stops the response.
    const ctrl = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) ctrl.abort();
    });
    const servername = (req.socket as { servername?: string | false }).servername;
    if (this.scheme === "https" && misdirectedOn(this.state.table, servername, authority)) {
      void writeResponse(res, misdirectedResponse(this.state.settings.serverHeader), false, ctrl.signal);
      return;
    }
    // The connection's SNI name for client-certificate guards (over TLS; none over h2c).
    const tls = this.scheme === "https";
    const target: AppTarget = {
      ...this.target,
      bind: (r) => {
        if (peer !== undefined) this.peers.set(r, peer);
        if (tls) bindServername(r, servername);
      },
    };
    this.pendingRequests++;
    void respondThroughApp(target, req, res, authority, ctrl.signal).finally(() => {
      this.pendingRequests--;
    });
  }
}
