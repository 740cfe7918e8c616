/**
 * A real upstream for proxy tests: a `Bun.serve` on a free loopback port that reports what it received
 * as JSON, plus a few behaviours picked by path — `/status/<n>`, `/slow/<ms>`, `/stream` (three chunks
 * 150 ms apart), `/big/<bytes>` (a body of that size), `/fixed` (a Content-Length body with hop-by-hop
 * headers to strip). It records the client port of each request, so a test can count the connections
 * the proxy opened.
 */
import type { Server } from "bun";

export interface Received {
  readonly upstream: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface TestUpstream {
  readonly name: string;
  readonly port: number;
  readonly server: Server<undefined>;
  /** Client (proxy-side) ports seen, one per request. */
  readonly clientPorts: number[];
  readonly requests: Received[];
  /** Paths of requests whose client (the proxy) went away before the answer. */
  readonly aborted: string[];
  /** Body chunks of `/upload` requests, in arrival order. */
  readonly uploads: string[];
  stop(): Promise<void>;
}

export function startUpstream(name: string): TestUpstream {
  const clientPorts: number[] = [];
  const requests: Received[] = [];
  const uploads: string[] = [];
  const aborted: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 30,
    async fetch(req, srv) {
      clientPorts.push(srv.requestIP(req)?.port ?? -1);
      const url = req.url;
      const path = url.slice(url.indexOf("/", url.indexOf("://") + 3));
      const bare = path.split("?")[0] ?? "";
      req.signal.addEventListener("abort", () => aborted.push(path));
      if (bare.startsWith("/stream")) return streaming();
      if (bare === "/upload" && req.body) {
        const decoder = new TextDecoder();
        for await (const chunk of req.body) uploads.push(decoder.decode(chunk));
        return new Response(uploads.join(""));
      }
      if (bare.startsWith("/slow/")) await Bun.sleep(Number(bare.slice(6)));
      if (bare.startsWith("/big/")) return new Response(Buffer.alloc(Number(bare.slice(5)), 0x61));
      if (bare === "/fixed") {
        return new Response("fixed-length body", {
          headers: {
            connection: "x-hop, content-length",
            "x-hop": "1",
            "keep-alive": "timeout=5",
            "x-kept": "yes",
          },
        });
      }
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => {
        headers[k] = v;
      });
      const got: Received = { upstream: name, method: req.method, path, headers, body: await req.text() };
      requests.push(got);
      const status = bare.startsWith("/status/") ? Number(bare.slice(8)) : 200;
      return Response.json(got, { status, headers: { "x-upstream": name } });
    },
  });
  return {
    name,
    port: server.port ?? 0,
    server,
    clientPorts,
    requests,
    uploads,
    aborted,
    stop: () => server.stop(true),
  };
}

function streaming(): Response {
  let n = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (n > 0) await Bun.sleep(150);
      n++;
      c.enqueue(new TextEncoder().encode(`chunk${n};`));
      if (n === 3) c.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/plain" } });
}
