/**
 * Floor row of the proxy bench: the pipe (pipe.ts) plus Gatehouse's own HTTP work on each request: the
 * request head parsed (request-head.ts), its target normalised (target-path.ts), the host and path looked up
 * in a Map, the upstream head written (head-to-upstream.ts, X-Forwarded-* and X-Request-Id), the response
 * head parsed (response-head.ts) and rewritten (head-to-client.ts). Still one upstream connection per
 * client and no route table, pool, time limits, retries, metrics or filters, and only what the bench
 * sends (a whole head per read, Content-Length responses) is handled: the distance between this row and
 * Gatehouse is what those features cost per request. Not a proxy to run.
 * Usage: bun bench/floor/bare-http.ts UPSTREAM_PORT PORT
 */
import type { Socket, TCPSocketListenOptions } from "bun";
import { passedOnHead } from "../../src/proxy/raw-front/http1/head-to-client.ts";
import { plainUpstreamHead } from "../../src/proxy/raw-front/http1/head-to-upstream.ts";
import { findHeadEnd, parseRequestHead } from "../../src/proxy/raw-front/http1/request-head.ts";
import { parseResponseHead } from "../../src/proxy/raw-front/http1/response-head.ts";
import { routingTarget } from "../../src/proxy/raw-front/http1/target-path.ts";
import { scratch } from "../../src/proxy/raw-front/outbox.ts";
import { routeSet } from "../routes.ts";

const upstreamPort = Number(process.argv[2]);
const port = Number(process.argv[3]);
const endpointHost = `127.0.0.1:${upstreamPort}`;
const set = routeSet(100, 10);
const routes = new Map<string, readonly string[]>(set.hosts.map((h) => [h, set.paths]));
const hop = { peer: "127.0.0.1", peerTrusted: false, scheme: "http" as const, port };
const NOT_FOUND = Buffer.from("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");

interface Client {
  up: Socket<Upstream> | undefined;
  early: Buffer | undefined;
}
interface Upstream {
  client: Socket<Client>;
  /** Body bytes of the current response still to pass on; -1 between responses. */
  left: number;
}

function request(client: Socket<Client>, buf: Buffer): void {
  const head = parseRequestHead(buf, 0, findHeadEnd(buf, 0, buf.length));
  const target = typeof head === "number" ? undefined : routingTarget(head.target);
  const paths = typeof head === "number" ? undefined : routes.get(head.host ?? "");
  if (typeof head === "number" || target === undefined || !paths?.some((p) => target.path.startsWith(p))) {
    client.write(NOT_FOUND);
    return;
  }
  // As the gateway writes it (Outbox.writeScratch): from the scratch buffer it was built in.
  const up = plainUpstreamHead(head, target, hop, endpointHost).head;
  if (typeof up === "number") client.data.up?.write(scratch(), 0, up);
  else client.data.up?.write(up);
}

function response(up: Socket<Upstream>, buf: Buffer): void {
  const d = up.data;
  if (d.left >= 0) {
    d.client.write(buf);
    d.left -= buf.length;
    if (d.left <= 0) d.left = -1;
    return;
  }
  const end = findHeadEnd(buf, 0, buf.length);
  const res = end < 0 ? undefined : parseResponseHead(buf, 0, end, false);
  if (res === undefined) {
    d.client.end();
    return;
  }
  // As the gateway writes it: from the scratch buffer it was built in, when it fits there.
  const out = passedOnHead(res, "gatehouse", false, false, false, [], undefined, buf, end, buf.length);
  if (typeof out === "number") d.client.write(scratch(), 0, out);
  else d.client.write(out);
  d.left = res.contentLength - (buf.length - end);
  if (d.left <= 0) d.left = -1;
}

// Bun.listen honours reusePort though its types omit it (as src/proxy/raw-front/front.ts notes).
const options: TCPSocketListenOptions<Client> & { reusePort: boolean } = {
  hostname: "127.0.0.1",
  port,
  reusePort: true,
  data: undefined as unknown as Client,
  socket: {
    open(client) {
      client.data = { up: undefined, early: undefined };
      void Bun.connect<Upstream>({
        hostname: "127.0.0.1",
        port: upstreamPort,
        data: { client, left: -1 },
        socket: {
          open(up) {
            client.data.up = up;
            const early = client.data.early;
            client.data.early = undefined;
            if (early !== undefined) request(client, early);
          },
          data: response,
          close: (up) => {
            up.data.client.end();
          },
          error: () => {},
        },
      }).catch(() => client.end());
    },
    data(client, chunk) {
      if (client.data.up === undefined) client.data.early = chunk;
      else request(client, chunk);
    },
    close: (client) => {
      client.data.up?.end();
    },
    error: () => {},
  },
};
Bun.listen<Client>(options);
