/**
 * `--access-log-format` (nginx templates, ingress-nginx's default among them) and `--access-log-fields`
 * through a real GatewayServer on both fronts: the same bytes sent to each front give the same line, but
 * for what differs per request (time, ids, timings) and the one written exception (an HTTP/1.0 client of
 * Bun.serve reads as HTTP/1.1: Bun tells no version).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect as connectH2 } from "node:http2";
import { AccessLog, lineFormatOf } from "../../../src/observability/access-log/access-log.ts";
import { NAMED_LOG_FORMATS } from "../../../src/observability/access-log/template.ts";
import { GatewayMetrics } from "../../../src/observability/metrics.ts";
import { MetricsAndAccessLog } from "../../../src/observability/request-observer.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";
import {
  backend,
  forwardTo,
  listener,
  match,
  model,
  route,
  vhost,
} from "../../../src/proxy/testing/model.ts";
import { startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { FRONTS, type Front, forEachFront } from "../../helpers/fronts.ts";

const TEMPLATE = `${NAMED_LOG_FORMATS.upstreaminfo} | $host $uri [$args] $server_protocol $route_name $http_x_note`;
const FIELDS = "status,protocol,user_agent,referer,request_length,upstream_status,backend,path";

const REQUESTS = {
  /** The fast path on the raw front: forwarded to an endpoint. */
  forwarded:
    'GET /fixed?token=1&b=%22 HTTP/1.1\r\nHost: App.Test\r\nUser-Agent: probe/1 "x"\r\n' +
    "Referer: http://r.test/\r\nAuthorization: Basic YWxpY2U6cHc=\r\nX-Note: caf\xe9\r\n\r\n",
  /** A body: its declared length counts in $request_length. */
  posted: "POST /fixed HTTP/1.1\r\nHost: app.test\r\nContent-Length: 5\r\n\r\nhello",
  /** Relayed to the internal listener on the raw front (a mirror is not the fast path's). */
  relayed: "GET /mirrored/fixed HTTP/1.1\r\nHost: app.test\r\nUser-Agent: probe/2\r\n\r\n",
  unrouted: "GET /nothing?q=1 HTTP/1.1\r\nHost: app.test\r\n\r\n",
  noEndpoints: "GET /down HTTP/1.1\r\nHost: app.test\r\n\r\n",
} as const;

/** Lines per front and request name, compared once both fronts ran. */
const seen: Record<Front, Record<string, string>> = { raw: {}, bun: {} };

/** Sends `text` as it is on a new connection; resolves once a new line was logged. */
async function send(port: number, text: string, lines: string[]): Promise<string> {
  const before = lines.length;
  const s = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {}, close() {} } });
  s.write(Buffer.from(text, "latin1"));
  const deadline = Date.now() + 3000;
  while (lines.length === before && Date.now() < deadline) await Bun.sleep(5);
  s.end();
  expect(lines.length).toBe(before + 1);
  return lines[before] as string;
}

/** What differs per request and not per front: times, request ids, the upstream's port (one per suite). */
function steady(line: string): string {
  return line
    .replace(/127\.0\.0\.1:\d+/g, "UPSTREAM")
    .replace(/\[\d{2}\/\w{3}\/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\]/, "[TIME]")
    .replace(/\b\d+\.\d{3}\b/g, "S.SSS")
    .replace(/\b[0-9a-f]{32}\b/g, "REQID");
}

forEachFront("access-log formats", (front) => {
  let upstream: TestUpstream;
  const servers: GatewayServer[] = [];
  const text: string[] = [];
  const json: string[] = [];
  const ports: number[] = [];

  beforeAll(async () => {
    upstream = startUpstream("app");
    const mirror = { kind: "RequestMirror" as const, backendId: "app", percent: 100 };
    const m = model(
      [
        listener([
          vhost("app.test", [
            route(
              "r/mirrored",
              match("/mirrored"),
              forwardTo({ id: "ns/app:80", weight: 1, filters: [mirror] }),
              {
                filters: [{ kind: "URLRewrite", path: { type: "ReplacePrefixMatch", value: "/" } }],
              },
            ),
            route("r/fixed", match("/fixed"), forwardTo("ns/app:80")),
            route("r/down", match("/down"), forwardTo("gone")),
          ]),
        ]),
      ],
      [backend("ns/app:80", [upstream.port]), backend("app", [upstream.port]), backend("gone", [])],
    );
    for (const [lines, options] of [
      [text, { template: TEMPLATE }],
      [json, { fields: FIELDS }],
    ] as const) {
      const format = lineFormatOf(options);
      if ("error" in format) throw new Error(format.error);
      const metrics = new GatewayMetrics({ processMetrics: false });
      const log = new AccessLog(1, (l) => lines.push(l), format);
      const proxy = new GatewayServer({
        bind: "127.0.0.1",
        front,
        observer: new MetricsAndAccessLog(metrics, log),
      });
      await proxy.apply(m);
      servers.push(proxy);
      ports.push(proxy.ports()[0]?.port as number);
    }
  });

  afterAll(async () => {
    for (const s of servers) await s.stop();
    await upstream?.stop();
  });

  test("ingress-nginx's default format and more variables, for each kind of request", async () => {
    for (const [name, request] of Object.entries(REQUESTS))
      seen[front][name] = await send(ports[0] as number, request, text);
    const got = seen[front];
    expect(steady(got.forwarded as string)).toBe(
      `127.0.0.1 - alice [TIME] "GET /fixed?token=1&b=%22 HTTP/1.1" 200 17 "http://r.test/" ` +
        `"probe/1 \\x22x\\x22" ${REQUESTS.forwarded.length} S.SSS [ns/app:80] [] UPSTREAM ` +
        `17 S.SSS 200 REQID | app.test /fixed [token=1&b=%22] HTTP/1.1 r/fixed caf\\xE9\n`,
    );
    // Counted as parsed: the request line, `name: value` lines and the declared body.
    expect(got.posted).toContain(`"POST /fixed HTTP/1.1" 200 17 "-" "-" ${REQUESTS.posted.length} `);
    expect(steady(got.unrouted as string)).toBe(
      '127.0.0.1 - - [TIME] "GET /nothing?q=1 HTTP/1.1" 404 - "-" "-" 45 S.SSS [-] [] - - - - - ' +
        "| app.test /nothing [q=1] HTTP/1.1 - -\n",
    );
    // Refused before any endpoint: no upstream, though the request had its id made.
    expect(got.noEndpoints).toMatch(
      /" 503 - .* \[-\] \[\] - - - - [0-9a-f]{32} \| app\.test \/down \[\] HTTP\/1\.1 r\/down -\n$/,
    );
    expect(got.relayed).toMatch(
      / 200 17 "-" "probe\/2" .* \[ns\/app:80\] \[\] 127\.0\.0\.1:\d+ 17 [\d.]+ 200 [0-9a-f]{32} /,
    );
  });

  test("HTTP/1.0 reads as HTTP/1.0 on the raw front, fast or relayed; Bun.serve tells no version", async () => {
    const protocol = front === "raw" ? "HTTP/1.0" : "HTTP/1.1";
    for (const path of ["/fixed", "/mirrored/fixed"]) {
      const line = await send(ports[0] as number, `GET ${path} HTTP/1.0\r\nHost: app.test\r\n\r\n`, text);
      expect(line).toContain(`"GET ${path} ${protocol}" 200 `);
      expect(line).toContain(`[] ${protocol} r/`);
    }
  });

  test("--access-log-fields: the JSON line with the fields named", async () => {
    const line = await send(ports[1] as number, REQUESTS.forwarded, json);
    seen[front].json = line;
    expect(JSON.parse(line)).toEqual({
      level: "info",
      msg: "access",
      status: 200,
      protocol: "HTTP/1.1",
      user_agent: 'probe/1 "x"',
      referer: "http://r.test/",
      request_length: REQUESTS.forwarded.length,
      upstream_status: 200,
      backend: "ns/app:80",
      path: "/fixed",
    });
    const unrouted = JSON.parse(await send(ports[1] as number, REQUESTS.unrouted, json));
    expect(unrouted).toMatchObject({ status: 404, upstream_status: -1, backend: "", user_agent: "" });
  });
});

test("both fronts wrote the same lines for the same requests", () => {
  for (const name of [...Object.keys(REQUESTS), "json"]) {
    const [raw, bun] = FRONTS.map((f) => seen[f][name]);
    expect(raw).toBeDefined();
    expect(steady(bun as string)).toBe(steady(raw as string));
  }
});

forEachFront("access-log formats over HTTP/2", (front) => {
  test("a request served through node:http2 reads as HTTP/2.0", async () => {
    const upstream = startUpstream("h2");
    const lines: string[] = [];
    const format = lineFormatOf({
      template: "$server_protocol $request_method $request_uri $status $http_x_note",
    });
    if ("error" in format) throw new Error(format.error);
    const observer = new MetricsAndAccessLog(
      new GatewayMetrics({ processMetrics: false }),
      new AccessLog(1, (l) => lines.push(l), format),
    );
    const gw = new GatewayServer({ bind: "127.0.0.1", http2: true, front, observer });
    try {
      const https = listener([vhost("h2.test", [route("r/h2", match("/"), forwardTo("up"))])], {
        name: "test/https",
        protocol: "HTTPS",
        tls: { certificates: [selfSigned("h2.test")] },
      });
      await gw.apply(model([https], [backend("up", [upstream.port])]));
      const session = connectH2(`https://127.0.0.1:${gw.ports()[0]?.port}`, {
        servername: "h2.test",
        rejectUnauthorized: false,
      });
      session.on("error", () => {});
      await new Promise<void>((resolve, reject) => {
        const stream = session.request({ ":path": "/fixed?q=1", ":authority": "h2.test", "x-note": "n" });
        stream.resume();
        stream.on("end", resolve);
        stream.on("error", reject);
      });
      session.close();
      expect(lines).toEqual(["HTTP/2.0 GET /fixed?q=1 200 n\n"]);
    } finally {
      await gw.stop();
      await upstream.stop();
    }
  });
});
