/**
 * A stand-in for the upstream conformance echo pods (ingress `echoserver.go`, Gateway API `echo-basic`),
 * answering with the same JSON so the upstream assertions mean the same thing here. See
 * ../shared/conformance/ingress/README.md ("Echo server response") and gateway-api/README.md ("Echo backend").
 *
 * Known differences from the Go servers, all from what Bun.serve exposes:
 * - A header sent twice arrives joined (`a, b`) and is echoed as one value, where Go lists two.
 * - `path` comes from Bun's request URL: `..`/`.` segments are already resolved and non-ASCII bytes
 *   percent-encoded; everything else (query, `%2F`, `//`) is as received.
 * - No TLS port. The h2c port (`startH2cEchoServer`, node:http2) speaks HTTP/2 only: an HTTP/1.1 request fails at
 *   the protocol level instead of getting upstream's 400 (Bun's cleartext http2 server has no HTTP/1 fallback).
 */
import { createServer as createH2cServer } from "node:http2";
import type { Server } from "bun";

export interface EchoOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  hostname?: string;
  namespace?: string;
  ingress?: string;
  service?: string;
  pod?: string;
  /** Receives `Echoing back request made to <RequestURI> to client (<remote>)` lines (upstream: stdout). */
  onLog?: (line: string) => void;
}

export interface EchoServer {
  readonly port: number;
  readonly url: string;
  /** Requests received so far, all paths included. */
  readonly requests: number;
  stop(): Promise<void>;
}

/** The upstream HTTP port: HTTP/1.1, plus the websocket echo on `/ws`. */
export function startEchoServer(options: EchoOptions = {}): EchoServer {
  const echo = echoHandler(options);
  const host = options.hostname ?? "127.0.0.1";
  const server: Server<undefined> = Bun.serve({
    port: options.port ?? 0,
    hostname: host,
    // The delay= and retry cases hold requests open; Bun's 10 s default would cut long delays short.
    idleTimeout: 0,
    async fetch(req, srv) {
      echo.requests++;
      const uri = requestURI(req.url);
      if (uri.split("?")[0] === "/ws") {
        // Upstream serves a websocket echo here; a plain request is refused like Go's handshake does.
        if (srv.upgrade(req)) return undefined;
        return new Response("websocket upgrade expected", { status: 400 });
      }
      const ip = srv.requestIP(req);
      const remote = ip
        ? ip.family === "IPv6"
          ? `[${ip.address}]:${ip.port}`
          : `${ip.address}:${ip.port}`
        : "";
      return echo.answer(uri, req.method, req.headers, "HTTP/1.1", String(srv.port), remote);
    },
    websocket: {
      message(ws, message) {
        ws.send(message);
      },
    },
  });
  return {
    port: server.port as number,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${server.port}`,
    get requests() {
      return echo.requests;
    },
    stop: () => server.stop(true),
  };
}

/**
 * The upstream `H2C_PORT`: cleartext HTTP/2 with prior knowledge (node:http2, which Bun.serve lacks),
 * answering like the HTTP port with `proto: "HTTP/2.0"`. `httpPort` in the echo is this port.
 */
export async function startH2cEchoServer(options: EchoOptions = {}): Promise<EchoServer> {
  const echo = echoHandler(options);
  const host = options.hostname ?? "127.0.0.1";
  let port = 0;
  const server = createH2cServer((req, res) => {
    echo.requests++;
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (name === ":authority") headers.set("host", String(value));
      else if (!name.startsWith(":"))
        for (const v of [value].flat()) if (v !== undefined) headers.append(name, v);
    }
    const remote = `${req.socket.remoteAddress}:${req.socket.remotePort}`;
    echo
      .answer(req.url, req.method, headers, "HTTP/2.0", String(port), remote)
      .then(async (r) => {
        const body = await r.text(); // a /retry/ reset is a body that errors: reset the stream instead
        res.writeHead(r.status, Object.fromEntries(r.headers));
        res.end(body);
      })
      .catch(() => res.stream.close(0x2)); // INTERNAL_ERROR
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.address();
  port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    get requests() {
      return echo.requests;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Everything but the websocket, shared by both listeners: special paths, delay, the echo JSON. */
function echoHandler(options: EchoOptions) {
  const context = {
    namespace: options.namespace ?? "",
    ingress: options.ingress ?? "",
    service: options.service ?? "",
    pod: options.pod ?? "",
  };
  const log = options.onLog ?? (() => {});
  const attempts = new Map<string, number>(); // /retry/ counters, keyed by uuid
  const state = {
    requests: 0,
    async answer(
      uri: string,
      method: string,
      reqHeaders: Headers,
      proto: string,
      httpPort: string,
      remote: string,
    ): Promise<Response> {
      const q = uri.indexOf("?");
      const path = (q < 0 ? uri : uri.slice(0, q)).replaceAll("//", "/"); // routing only, as upstream
      const query = new URLSearchParams(q < 0 ? "" : uri.slice(q + 1));
      if (path === "/health") return new Response("OK");
      if (path.startsWith("/status/")) {
        const m = /^\/status\/(\d\d\d)$/.exec(uri); // upstream matches the raw RequestURI
        return new Response(null, { status: m && validStatus(Number(m[1])) ? Number(m[1]) : 400 });
      }
      if (path.startsWith("/retry/")) {
        const failure = await retryFailure(query, attempts);
        if (failure) return failure;
      }
      log(`Echoing back request made to ${uri} to client (${remote})`);
      const delay = query.get("delay");
      if (delay) {
        const ms = parseGoDuration(delay);
        if (ms === undefined) return jsonError(`time: invalid duration "${delay}"`, 500);
        await Bun.sleep(ms);
      }
      const body = {
        path: uri,
        host: reqHeaders.get("host") ?? "",
        method,
        proto,
        headers: goHeaders(reqHeaders),
        httpPort,
        ...context,
      };
      const headers = echoSetHeaders(reqHeaders.get("x-echo-set-header"));
      headers.set("Content-Type", "application/json");
      headers.set("X-Content-Type-Options", "nosniff");
      return new Response(goJSON(body), { headers });
    },
  };
  return state;
}

/** The request target as received: everything after the authority of Bun's absolute `req.url`. */
export function requestURI(url: string): string {
  const slash = url.indexOf("/", url.indexOf("//") + 2);
  return slash < 0 ? "/" : url.slice(slash);
}

/**
 * `/retry/…?uuid=U&succeedAfter=N[&responseCode=C][&delayRetry=D]`: attempts 1..N for a uuid fail (after
 * sleeping D), later ones echo. A failure answers C, or without C resets the connection: Bun.serve has no
 * socket to destroy, but a response body stream that errors before its first byte makes Bun drop the
 * connection with nothing written, which the client sees as ECONNRESET.
 */
async function retryFailure(
  query: URLSearchParams,
  attempts: Map<string, number>,
): Promise<Response | undefined> {
  const uuid = query.get("uuid");
  if (!uuid) return jsonError("uuid is required", 400);
  const attempt = (attempts.get(uuid) ?? 0) + 1;
  attempts.set(uuid, attempt);
  if (attempt > (Number(query.get("succeedAfter")) || 0)) return undefined;
  const delay = parseGoDuration(query.get("delayRetry") ?? "0s");
  if (delay) await Bun.sleep(delay);
  const code = Number(query.get("responseCode"));
  if (validStatus(code)) return new Response(null, { status: code });
  return new Response(new ReadableStream({ start: (c) => c.error(undefined) }));
}

/** Response headers from `X-Echo-Set-Header: Name:Value,Name:Value`; a repeated name is appended with `,`. */
function echoSetHeaders(spec: string | null): Headers {
  const out = new Headers();
  for (const pair of (spec ?? "").split(",")) {
    const kv = pair.trim();
    const colon = kv.indexOf(":");
    const name = colon < 0 ? kv : kv.slice(0, colon);
    const value = colon < 0 ? "" : kv.slice(colon + 1).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) continue; // Go drops invalid names when writing
    const prev = out.get(name);
    out.set(name, prev === null ? value : `${prev},${value}`);
  }
  return out;
}

/** Go's `http.Header` as JSON: canonical names (`X-Forwarded-For`), arrays of values, Host left out. */
function goHeaders(headers: Headers): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of headers) {
    if (name === "host" || name === "transfer-encoding") continue; // Go moves both out of r.Header
    const canonical = name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
    out[canonical] = [...(out[canonical] ?? []), value]; // only set-cookie repeats here
  }
  return out;
}

/** `json.MarshalIndent(v, "", " ")`: 1-space indent, map keys sorted, `<>&` and U+2028/9 escaped. */
function goJSON(body: Record<string, unknown>): string {
  const headers = body.headers as Record<string, string[]>;
  const sorted = Object.fromEntries(
    Object.keys(headers)
      .sort()
      .map((k) => [k, headers[k]]),
  );
  return JSON.stringify({ ...body, headers: sorted }, null, 1).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** What a `Response` accepts (1xx cannot be sent as a final answer). */
function validStatus(code: number): boolean {
  return Number.isInteger(code) && code >= 200 && code <= 599;
}

function jsonError(message: string, status: number): Response {
  return new Response(JSON.stringify({ message }), {
    status,
    headers: { "Content-Type": "application/json", "X-Content-Type-Options": "nosniff" },
  });
}

const units: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's `time.ParseDuration` in milliseconds (`1s`, `500ms`, `1m30s`, `1.5h`); undefined when invalid. */
export function parseGoDuration(text: string): number | undefined {
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(text);
  if (!m) return text === "0" ? 0 : undefined;
  let total = 0;
  for (const part of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g))
    total += Number(part[1]) * (units[part[2] as string] ?? 0);
  return m[1] === "-" ? -total : total;
}
