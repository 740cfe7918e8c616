/**
 * WebSocket proxying for every route (ingress-nginx users expect it to just work; Gateway API
 * appProtocol `kubernetes.io/ws` asks for it). Once a request is routed, filtered and has an endpoint,
 * the upstream WebSocket is opened first (Bun's client sends our headers and Host) and only then is the
 * client upgraded with `server.upgrade()` — so an upstream that refuses or is down is answered with
 * 502/504 as a plain HTTP response instead of a socket that opens and closes at once. Bun allows the
 * upgrade after an await in the fetch handler (measured).
 *
 * Frames are relayed as they come (text stays text, binary stays binary); a close on one side closes the
 * other with the same code. Neither Bun socket can pause reading, so backpressure is bounded rather than
 * propagated: a client that falls more than `backpressureLimit` behind is closed by Bun, an upstream
 * more than MAX_BUFFERED behind closes both sides with 1013 (try again later).
 */
import type { Server, ServerWebSocket, WebSocketHandler } from "bun";
import type { CompiledBackendTLS } from "../../backend-tls/options.ts";
import type { RequestContext } from "../../filters/filter-types.ts";

/** What each proxied client socket carries. */
export interface ProxiedSocket {
  readonly upstream: WebSocket;
  /** Frames that came from the upstream before the client socket opened; null once it has. */
  pending: (string | ArrayBuffer)[] | null;
  pendingBytes: number;
  client: ServerWebSocket<ProxiedSocket> | undefined;
  /** Set when the upstream closed before the client socket opened. */
  upstreamClose: { readonly code: number; readonly reason: string } | undefined;
  /** Called once when the pair is over (either side closed): an activated backend's in-flight count. */
  onEnd: (() => void) | undefined;
}

/** The pair is over: `onEnd` runs once, whichever side closed first. */
function ended(data: ProxiedSocket): void {
  const f = data.onEnd;
  data.onEnd = undefined;
  f?.();
}

export type ProxyServer = Server<ProxiedSocket>;

/** Bytes either side may fall behind before the pair is closed. */
export const MAX_BUFFERED = 4 * 1024 * 1024;

/** An HTTP/1.1 `Upgrade: websocket` GET (Bun.serve answers only HTTP/1.1, so no extended CONNECT). */
export function isWebSocketUpgrade(req: Request, upgrade: string): boolean {
  return req.method === "GET" && upgrade.toLowerCase().includes("websocket");
}

export type UpstreamOpen = { ok: true; socket: WebSocket } | { ok: false; status: 502 | 504 | 499 };

/**
 * Opens the upstream socket for `ctx` (its headers are a copy of the client's, already edited by the
 * filters) at `base` (`http://ip:port`); resolves once it is open or has failed.
 */
export function openUpstream(
  ctx: RequestContext,
  base: string,
  timeoutMs: number,
  /** WebSocket over TLS (`wss`) with these settings; absent: `ws`. */
  tls?: CompiledBackendTLS,
): Promise<UpstreamOpen> {
  const h = ctx.headers;
  const offered = h.get("sec-websocket-protocol");
  // Bun's client makes its own handshake: key, version and extensions are its business.
  for (const name of [
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-extensions",
    "sec-websocket-protocol",
  ])
    h.delete(name);
  if (ctx.host !== null) h.set("host", ctx.host);
  const protocols =
    offered === null
      ? []
      : offered
          .split(",")
          .map((p) => p.trim())
          .filter((p) => p !== "");
  const url = `${tls === undefined ? "ws" : "wss"}${base.slice(4)}${ctx.path}${ctx.query}`;
  const socket = new WebSocket(url, {
    headers: h,
    protocols,
    perMessageDeflate: false,
    ...(tls !== undefined ? { tls: tls.fetch } : {}),
  });
  socket.binaryType = "arraybuffer";
  return new Promise((resolve) => {
    let timer: Timer | undefined;
    const done = (r: UpstreamOpen) => {
      if (timer !== undefined) clearTimeout(timer);
      ctx.req.signal.removeEventListener("abort", gone);
      socket.onopen = socket.onerror = socket.onclose = null;
      if (!r.ok) socket.close();
      resolve(r);
    };
    const gone = () => done({ ok: false, status: 499 });
    if (Number.isFinite(timeoutMs)) timer = setTimeout(() => done({ ok: false, status: 504 }), timeoutMs);
    ctx.req.signal.addEventListener("abort", gone);
    socket.onopen = () => done({ ok: true, socket });
    socket.onerror = socket.onclose = () => done({ ok: false, status: 502 });
  });
}

/**
 * Upgrades the client and wires it to an open upstream socket. `headers` go on the 101 answer (the
 * negotiated subprotocol is added). False when Bun refused the upgrade (the upstream is then closed).
 * `onEnd` runs once when the pair is over, or at once when the upgrade was refused.
 */
export function upgradeClient(
  req: Request,
  srv: ProxyServer,
  upstream: WebSocket,
  headers: Headers,
  onEnd?: () => void,
): boolean {
  const data: ProxiedSocket = {
    upstream,
    pending: [],
    pendingBytes: 0,
    client: undefined,
    upstreamClose: undefined,
    onEnd,
  };
  if (upstream.protocol !== "") headers.set("sec-websocket-protocol", upstream.protocol);
  upstream.onmessage = (e: MessageEvent<string | ArrayBuffer>) => {
    const client = data.client;
    if (client !== undefined) {
      client.send(e.data);
      return;
    }
    data.pendingBytes += typeof e.data === "string" ? e.data.length : e.data.byteLength;
    data.pending?.push(e.data);
    if (data.pendingBytes > MAX_BUFFERED) upstream.close(1013, "client not reading");
  };
  upstream.onclose = (e: CloseEvent) => {
    ended(data);
    if (data.client !== undefined) closeSocket(data.client, e.code, e.reason, 1011);
    else data.upstreamClose = { code: e.code, reason: e.reason };
  };
  upstream.onerror = null;
  if (srv.upgrade(req, { data, headers })) return true;
  upstream.onmessage = upstream.onclose = null;
  upstream.close(1001);
  ended(data);
  return false;
}

/** The `websocket` option of a listener's `Bun.serve`; `open` tracks its sockets for draining. */
export function websocketHandler(open: Set<ServerWebSocket<ProxiedSocket>>): WebSocketHandler<ProxiedSocket> {
  return {
    backpressureLimit: MAX_BUFFERED,
    closeOnBackpressureLimit: true,
    open(ws) {
      open.add(ws);
      const d = ws.data;
      d.client = ws;
      for (const m of d.pending ?? []) ws.send(m);
      d.pending = null;
      if (d.upstreamClose !== undefined) closeSocket(ws, d.upstreamClose.code, d.upstreamClose.reason, 1011);
    },
    message(ws, message) {
      const up = ws.data.upstream;
      if (up.readyState !== WebSocket.OPEN) return;
      up.send(message);
      if (up.bufferedAmount > MAX_BUFFERED) {
        ws.close(1013, "upstream not reading");
        up.close(1013, "client sending too fast");
      }
    },
    close(ws, code, reason) {
      open.delete(ws);
      ended(ws.data);
      const up = ws.data.upstream;
      if (up.readyState === WebSocket.OPEN || up.readyState === WebSocket.CONNECTING)
        closeSocket(up, code, reason, 1001);
    },
  };
}

/** Passes a close code on; 1005 (none given) closes without one, 1006/1015 (abnormal) become `abnormal`. */
function closeSocket(
  s: { close(code?: number, reason?: string): void },
  code: number,
  reason: string,
  abnormal: number,
): void {
  if (code === 1005) s.close();
  else if (code === 1006 || code === 1015 || code < 1000 || code > 4999) s.close(abnormal);
  else s.close(code, reason);
}
