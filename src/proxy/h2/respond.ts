/**
 * One HTTP/2 (or node:http2 HTTP/1.1 fallback) request through the listener app, shared by the HTTPS
 * listener (listener.ts) and the cleartext one (session-server.ts), so both answer exactly alike: the
 * bridged Request runs the same request path as Bun.serve's, and an unexpected error costs this
 * request only (500, or a reset stream once the head is out).
 */
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { limitedLog } from "../../observability/log-limit.ts";
import type { ListenerApp } from "../listeners/app.ts";
import { errorResponse } from "../request/responses.ts";
import type { ProxyServer } from "../request/websocket/relay.ts";
import type { ListenerState } from "../settings.ts";
import { resetResponse, toRequest, writeResponse } from "./bridge.ts";

export interface AppTarget {
  readonly app: ListenerApp;
  readonly state: ListenerState;
  /** What the app calls `server` (client address via `requestIP`). */
  readonly facade: ProxyServer;
  readonly scheme: "http" | "https";
  /** Told each bridged Request before the app sees it (so the facade can find its connection). */
  readonly bind: (request: Request) => void;
}

/**
 * RFC 9113 §8.3.1: an HTTP/2 request whose Host field names another authority than `:authority` is
 * malformed (nginx answers 400): routing by one and forwarding the other would let the two disagree.
 */
function conflictingHost(req: Http2ServerRequest): boolean {
  if (req.httpVersionMajor !== 2) return false;
  const authority = req.headers[":authority"];
  const host = req.headers.host;
  return authority !== undefined && host !== undefined && authority.toLowerCase() !== host.toLowerCase();
}

export async function respondThroughApp(
  target: AppTarget,
  req: Http2ServerRequest,
  res: Http2ServerResponse,
  authority: string,
  signal: AbortSignal,
): Promise<void> {
  const { state } = target;
  try {
    const request = conflictingHost(req) ? undefined : toRequest(req, authority, signal, target.scheme);
    if (request === undefined) {
      await writeResponse(res, errorResponse(400, state.settings.serverHeader), false, signal);
      return;
    }
    target.bind(request);
    const out = await target.app.fetch(request, target.facade);
    await writeResponse(res, out, req.method === "HEAD", signal);
  } catch (err) {
    const fields = { listener: state.table.name, error: err instanceof Error ? err.message : String(err) };
    limitedLog("error", state.table.name, "unexpected error while serving a request", fields);
    if (!res.headersSent)
      await writeResponse(res, errorResponse(500, state.settings.serverHeader), false, signal);
    else resetResponse(res);
  }
}
