/**
 * CORS on the raw front's fast path: preflights answered there (never relayed, never forwarded), and
 * the filter's response fields on forwarded answers, with the fields the Bun front sends for the same
 * request. A GatewayServer per front, one model, the same bytes on the wire to both.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import type { CORSFilter, Filter } from "../../model/index.ts";
import { compile } from "../compile.ts";
import { GatewayServer } from "../listeners/server.ts";
import { backend, forwardTo, listener, match, model, route, vhost } from "../testing/model.ts";
import { startUpstream, type TestUpstream } from "../testing/upstream.ts";
import { isFastRoute } from "./plan.ts";
import { relayedCount } from "./relayed-exchange.ts";

const testSource = { kind: "Test", namespace: "test", name: "t" } as const;
const gatewayCors: CORSFilter = {
  kind: "CORS",
  allowOrigins: ["https://app.example", "https://*.wild.example"],
  allowMethods: ["GET", "POST"],
  allowHeaders: ["x-a"],
  exposeHeaders: ["x-e"],
  allowCredentials: false,
  maxAgeSeconds: 60,
};
const echoing: CORSFilter = {
  ...gatewayCors,
  allowOrigins: ["*"],
  allowMethods: ["*"],
  allowHeaders: ["*"],
  allowCredentials: true,
};
const nginxCors: CORSFilter = { ...gatewayCors, style: "IngressNginx" };
const addHeader: Filter = {
  kind: "ResponseHeaderModifier",
  edits: { set: [], add: [{ name: "x-added", value: "yes" }], remove: [] },
};

let up: TestUpstream;
const fronts = { raw: 0, bun: 0 };
const servers: GatewayServer[] = [];

const gatewayModel = () =>
  model(
    [
      listener([
        vhost("a.example", [
          route("gateway", match("/gw"), forwardTo("up"), { filters: [gatewayCors, addHeader] }),
          route("echoing", match("/echo"), forwardTo("up"), { filters: [echoing] }),
          route("nginx", match("/nginx"), forwardTo("up"), { filters: [nginxCors] }),
          // Guards keep a CORS route on the full request path: its preflight skips authentication there.
          route("guarded", match("/guarded"), forwardTo("up"), {
            filters: [gatewayCors],
            ipAccess: [{ source: testSource, allow: [], deny: ["192.0.2.1"] }],
          }),
        ]),
      ]),
    ],
    [backend("up", [up.port])],
  );

beforeAll(async () => {
  up = startUpstream("up");
  for (const front of ["raw", "bun"] as const) {
    const gw = new GatewayServer({ bind: "127.0.0.1", front });
    servers.push(gw);
    await gw.apply(gatewayModel());
    fronts[front] = gw.ports()[0]?.port ?? 0;
  }
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await up.stop();
});

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
 * Status line and fields (names lower-cased, sorted). Left out: Date, and Connection (the raw front
 * says `close` when it closes, on relayed answers too; Bun.serve does not). `only`: just these names.
 */
function parsed(wire: string, only?: RegExp): { status: string; fields: string[] } {
  const [status = "", ...lines] = wire.slice(0, wire.indexOf("\r\n\r\n")).split("\r\n");
  const fields = lines
    .map((l) => {
      const colon = l.indexOf(":");
      return `${l.slice(0, colon).toLowerCase()}: ${l.slice(colon + 1).trim()}`;
    })
    .filter((f) => !f.startsWith("date: ") && !f.startsWith("connection: "))
    .filter((f) => only === undefined || only.test(f))
    .sort();
  return { status, fields };
}

/** The request on both fronts: what each answered, how many requests the raw front relayed and forwarded. */
async function both(request: string, only?: RegExp) {
  const relayedBefore = relayedCount();
  const upBefore = up.requests.length;
  const raw = await send(fronts.raw, request);
  const relayed = relayedCount() - relayedBefore;
  const forwarded = up.requests.length - upBefore;
  const bun = await send(fronts.bun, request);
  return { raw: parsed(raw, only), bun: parsed(bun, only), relayed, forwarded };
}

const preflight = (path: string, origin: string, extra = "") =>
  `OPTIONS ${path} HTTP/1.1\r\nHost: a.example\r\nOrigin: ${origin}\r\n` +
  `Access-Control-Request-Method: POST\r\n${extra}Connection: close\r\n\r\n`;
const get = (path: string, extra = "") =>
  `GET ${path} HTTP/1.1\r\nHost: a.example\r\n${extra}Connection: close\r\n\r\n`;
const CORS_FIELDS = /^(access-control-|vary: |x-added: )/;

describe("CORS on the raw front", () => {
  test("CORS routes are fast unless guarded", () => {
    const routes = compile(gatewayModel()).listeners[0]?.hosts.exact.get("a.example")?.routes ?? [];
    expect(routes.map((r) => `${r.name} ${isFastRoute(r)}`).sort()).toEqual([
      "echoing true",
      "gateway true",
      "guarded false",
      "nginx true",
    ]);
  });

  const preflights: [string, string][] = [
    ["allowed origin", preflight("/gw/x", "https://app.example", "Access-Control-Request-Headers: x-a\r\n")],
    ["wildcard origin", preflight("/gw", "https://deep.sub.wild.example")],
    ["foreign origin: bare", preflight("/gw", "https://evil.example")],
    [
      "credentials: echoed",
      preflight("/echo", "https://x.example", "Access-Control-Request-Headers: x-b\r\n"),
    ],
    ["ingress-nginx style", preflight("/nginx", "https://app.example")],
    ["ingress-nginx style, foreign origin", preflight("/nginx", "https://evil.example")],
    [
      "ingress-nginx style, OPTIONS without a preflight",
      get("/nginx", "Origin: https://app.example\r\n").replace("GET", "OPTIONS"),
    ],
  ];
  for (const [name, request] of preflights) {
    test(`preflight, ${name}: answered on the raw front as on the Bun front`, async () => {
      const { raw, bun, relayed, forwarded } = await both(request);
      expect(relayed).toBe(0);
      expect(forwarded).toBe(0);
      expect(raw.status).toBe("HTTP/1.1 204 No Content");
      expect(raw).toEqual(bun);
    });
  }

  test("an allowed preflight carries the filter's fields", async () => {
    const { raw } = await both(preflight("/gw/x", "https://app.example"));
    expect(raw.fields).toEqual([
      "access-control-allow-headers: x-a",
      "access-control-allow-methods: GET, POST",
      "access-control-allow-origin: https://app.example",
      "access-control-expose-headers: x-e",
      "access-control-max-age: 60",
      "vary: Origin",
      "x-added: yes",
    ]);
  });

  const forwardedCases: [string, string][] = [
    ["allowed origin", get("/gw/y", "Origin: https://app.example\r\n")],
    ["foreign origin", get("/gw/y", "Origin: https://evil.example\r\n")],
    ["no origin", get("/gw/y")],
    ["credentials", get("/echo", "Origin: https://x.example\r\n")],
    ["ingress-nginx style", get("/nginx", "Origin: https://app.example\r\n")],
    ["OPTIONS that is no preflight", get("/gw", "Origin: https://app.example\r\n").replace("GET", "OPTIONS")],
  ];
  for (const [name, request] of forwardedCases) {
    test(`forwarded, ${name}: the same CORS fields on both fronts, not relayed`, async () => {
      const { raw, bun, relayed, forwarded } = await both(request, CORS_FIELDS);
      expect(relayed).toBe(0);
      expect(forwarded).toBe(1);
      expect(raw.status).toBe("HTTP/1.1 200 OK");
      expect(raw).toEqual(bun);
    });
  }

  test("a forwarded answer to an allowed origin names it", async () => {
    const { raw } = await both(get("/gw/y", "Origin: https://app.example\r\n"), CORS_FIELDS);
    expect(raw.fields).toEqual([
      "access-control-allow-origin: https://app.example",
      "access-control-expose-headers: x-e",
      "vary: Origin",
      "x-added: yes",
    ]);
  });

  test("a guarded CORS route is still relayed, with the same answers", async () => {
    const pre = await both(preflight("/guarded", "https://app.example"));
    expect(pre.relayed).toBe(1);
    expect(pre.forwarded).toBe(0);
    expect(pre.raw.fields.filter((f) => !f.startsWith("server: "))).toEqual(pre.bun.fields);
  });
});
