/**
 * Redirects and direct responses on the raw front: answered there (no request relayed to the internal
 * app), with the status, fields and body the Bun front sends for the same request. A GatewayServer per
 * front, one model, the same bytes on the wire to both.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import type { Filter } from "../../model/index.ts";
import { GatewayServer } from "../listeners/server.ts";
import { type RequestInfo, type RequestObserver, startedInfo } from "../request/observer.ts";
import { listener, match, model, route, vhost } from "../testing/model.ts";
import { relayedCount } from "./relayed-exchange.ts";

const testSource = { kind: "Test", namespace: "test", name: "t" } as const;
const addHeader: Filter = {
  kind: "ResponseHeaderModifier",
  edits: { set: [], add: [{ name: "x-added", value: "yes" }], remove: [] },
};
const cors: Filter = {
  kind: "CORS",
  allowOrigins: ["https://app.example"],
  allowMethods: ["GET"],
  allowHeaders: [],
  exposeHeaders: ["x-exposed"],
  allowCredentials: true,
  maxAgeSeconds: 5,
};

const gatewayModel = model(
  [
    listener([
      vhost("a.example", [
        route("to-https", match("/secure"), { kind: "Redirect", scheme: "https", statusCode: 301 }),
        route(
          "moved",
          match("/old"),
          { kind: "Redirect", path: { type: "ReplacePrefixMatch", value: "/new" }, statusCode: 302 },
          { filters: [addHeader] },
        ),
        route("elsewhere", match("/away"), {
          kind: "Redirect",
          hostname: "b.example",
          port: 8443,
          scheme: "https",
          path: { type: "ReplaceFullPath", value: "/landing/" },
          stripTrailingSlash: true,
          statusCode: 308,
        }),
        route("literal", match("/literal"), {
          kind: "Redirect",
          location: "https://c.example$request_uri",
          statusCode: 307,
        }),
        route(
          "cors-redirect",
          match("/cors-old"),
          { kind: "Redirect", statusCode: 303 },
          { filters: [cors] },
        ),
        route("teapot", match("/direct"), { kind: "DirectResponse", status: 418, body: "short and stout é" }),
        route("empty", match("/empty"), { kind: "DirectResponse", status: 204, body: "ignored" }),
        route(
          "json",
          match("/json"),
          { kind: "DirectResponse", status: 200, body: '{"a":1}', contentType: "application/json" },
          { filters: [addHeader] },
        ),
        route("unavailable", match("/unavailable"), { kind: "DirectResponse", status: 503, body: "down" }),
        // A guard keeps a redirect on the full request path (relayed on the raw front).
        route(
          "guarded",
          match("/guarded"),
          { kind: "Redirect", scheme: "https", statusCode: 301 },
          {
            ipAccess: [{ source: testSource, allow: [], deny: ["192.0.2.1"] }],
          },
        ),
      ]),
    ]),
  ],
  [],
);

const fronts = { raw: 0, bun: 0 };
const servers: GatewayServer[] = [];

/** What each front told its observer: `route status method path client` per request. */
const observed = { raw: [] as string[], bun: [] as string[] };
function observer(front: "raw" | "bun"): RequestObserver {
  const note = (info: RequestInfo, status: number, method: string, path: string) =>
    observed[front].push(`${info.route} ${status} ${method} ${path} ${info.client}`);
  return {
    begin: () => startedInfo(),
    end: (info, req, res) => note(info, res.status, req.method, new URL(req.url).pathname),
    endRaw: (info, ex) => note(info, ex.status, ex.method, ex.path),
  };
}

beforeAll(async () => {
  for (const front of ["raw", "bun"] as const) {
    const gw = new GatewayServer({ bind: "127.0.0.1", front, observer: observer(front) });
    servers.push(gw);
    await gw.apply(gatewayModel);
    fronts[front] = gw.ports()[0]?.port ?? 0;
  }
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

/** Sends `request` on a new connection and reads until the server closes it. */
function send(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: "127.0.0.1", port }, () => socket.write(request));
    socket.setTimeout(5000, () => socket.destroy(new Error("timed out")));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
  });
}

/**
 * Status line, fields (names lower-cased, sorted) and body. Left out: Date (it differs by the second) and
 * Connection (the raw front says `close` when it closes, on relayed answers too; Bun.serve does not).
 */
function parsed(wire: string): { status: string; fields: string[]; body: string } {
  const end = wire.indexOf("\r\n\r\n");
  const [status = "", ...lines] = wire.slice(0, end).split("\r\n");
  const fields = lines
    .map((l) => {
      const colon = l.indexOf(":");
      return `${l.slice(0, colon).toLowerCase()}: ${l.slice(colon + 1).trim()}`;
    })
    .filter((f) => !f.startsWith("date: ") && !f.startsWith("connection: "))
    .sort();
  return { status, fields, body: wire.slice(end + 4) };
}

/** The request on both fronts; a Location naming the listener's own port says `PORT` instead. */
async function both(request: string) {
  const before = relayedCount();
  const raw = await send(fronts.raw, request);
  const relayed = relayedCount() - before;
  const bun = await send(fronts.bun, request);
  const own = (wire: string, port: number) => wire.replaceAll(`:${port}/`, ":PORT/");
  return { raw: parsed(own(raw, fronts.raw)), bun: parsed(own(bun, fronts.bun)), relayed };
}

const get = (path: string, extra = "", method = "GET") =>
  `${method} ${path} HTTP/1.1\r\nHost: a.example\r\n${extra}Connection: close\r\n\r\n`;

describe("answers the raw front makes itself", () => {
  const cases: [string, string, string][] = [
    ["scheme redirect", get("/secure/x?q=1"), "HTTP/1.1 301 Moved Permanently"],
    ["prefix redirect with a response filter", get("/old/page?a=b"), "HTTP/1.1 302 Found"],
    ["host, port and full path", get("/away/deep"), "HTTP/1.1 308 Permanent Redirect"],
    ["literal location with a variable", get("/literal/p?x=y"), "HTTP/1.1 307 Temporary Redirect"],
    [
      "CORS response fields on a redirect",
      get("/cors-old", "Origin: https://app.example\r\n"),
      "HTTP/1.1 303 See Other",
    ],
    ["direct response, UTF-8 body", get("/direct"), "HTTP/1.1 418 I'm a Teapot"],
    ["204 direct response", get("/empty"), "HTTP/1.1 204 No Content"],
    ["direct response with its media type and a filter", get("/json"), "HTTP/1.1 200 OK"],
    [
      "a redirect with a request body",
      `POST /secure HTTP/1.1\r\nHost: a.example\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc`,
      "HTTP/1.1 301 Moved Permanently",
    ],
  ];
  for (const [name, request, status] of cases) {
    test(`${name}: not relayed, as the Bun front answers`, async () => {
      const { raw, bun, relayed } = await both(request);
      expect(relayed).toBe(0);
      expect(raw.status).toBe(status);
      // Bun's reason phrase for 418 is its own; the status code and every field must agree.
      expect(raw.status.slice(0, 12)).toBe(bun.status.slice(0, 12));
      expect(raw.fields).toEqual(bun.fields);
      expect(raw.body).toBe(bun.body);
    });
  }

  test("HEAD of a direct response: its GET's length (the Bun front, through Hono, says 0)", async () => {
    const { raw, bun, relayed } = await both(get("/direct", "", "HEAD"));
    expect(relayed).toBe(0);
    expect(raw.body).toBe("");
    expect(bun.body).toBe("");
    expect(raw.fields).toContain("content-length: 18");
    expect(bun.fields).toContain("content-length: 0");
    const rest = (f: string[]) => f.filter((x) => !x.startsWith("content-length: "));
    expect(rest(raw.fields)).toEqual(rest(bun.fields));
  });

  test("the Location values themselves", async () => {
    const loc = async (request: string) =>
      (await both(request)).raw.fields.find((f) => f.startsWith("location: "))?.slice(10);
    expect(await loc(get("/secure/x?q=1"))).toBe("https://a.example/secure/x?q=1");
    expect(await loc(get("/old/page?a=b"))).toBe("http://a.example:PORT/new/page?a=b");
    expect(await loc(get("/away/deep"))).toBe("https://b.example:8443/landing");
    expect(await loc(get("/literal/p?x=y"))).toBe("https://c.example/literal/p?x=y");
  });

  test("metrics and the access log see them as on the Bun front", async () => {
    const at = { raw: observed.raw.length, bun: observed.bun.length };
    await both(get("/secure/x?q=1"));
    await both(get("/direct"));
    expect(observed.raw.slice(at.raw)).toEqual([
      "to-https 301 GET /secure/x 127.0.0.1",
      "teapot 418 GET /direct 127.0.0.1",
    ]);
    expect(observed.bun.slice(at.bun)).toEqual(observed.raw.slice(at.raw));
  });

  test("keep-alive: a second request on the connection is served", async () => {
    const keep = "GET /secure HTTP/1.1\r\nHost: a.example\r\n\r\n";
    const before = relayedCount();
    const wire = await send(fronts.raw, keep + get("/direct"));
    expect(relayedCount()).toBe(before);
    expect([...wire.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1])).toEqual(["301", "418"]);
    expect(wire.endsWith("short and stout é")).toBe(false);
    expect(Buffer.from(wire, "latin1").toString("utf8").endsWith("short and stout é")).toBe(true);
  });

  test("an error status to a gRPC call is relayed (app.ts makes it a gRPC status); other calls are not", async () => {
    const grpc = await both(get("/unavailable", "Content-Type: application/grpc\r\n"));
    expect(grpc.relayed).toBe(1);
    expect(grpc.raw.fields).toContain("grpc-status: 14");
    expect(grpc.raw.fields).toEqual(grpc.bun.fields);
    const plain = await both(get("/unavailable"));
    expect(plain.relayed).toBe(0);
    expect(plain.raw.status).toBe("HTTP/1.1 503 Service Unavailable");
    expect(plain.raw.fields).toEqual(plain.bun.fields);
  });

  test("a redirect with a guard is still relayed, with the same answer", async () => {
    const { raw, bun, relayed } = await both(get("/guarded"));
    expect(relayed).toBe(1);
    expect(raw.fields).toEqual(bun.fields);
  });
});
