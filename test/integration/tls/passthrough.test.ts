// Single front: TLS passthrough listeners are raw sockets routed by SNI whatever the front (`front` below is moot).
/**
 * TLS passthrough over real sockets: two TLS backends (Bun.serve, each with its own certificate) behind
 * one passthrough listener of a GatewayServer. The client's SNI picks the backend, the client sees that
 * backend's certificate (TLS is not terminated by the gateway), an unknown SNI or a non-TLS client is
 * closed, large bodies flow both ways, and an apply swaps routes and closes removed listeners.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:tls";
import type { GatewayModel, PassthroughListener } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";

setLogSink(() => {});

const certA = selfSigned("a.example");
const certB = selfSigned("b.example");

const backend = (name: string, cert: typeof certA) =>
  Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: cert.certPem, key: cert.keyPem },
    fetch: async (req) => {
      if (req.method === "POST") return new Response(`${name}:${(await req.arrayBuffer()).byteLength}`);
      const size = Number(new URL(req.url).searchParams.get("size") ?? 0);
      return new Response(size > 0 ? new Uint8Array(size).fill(97) : name);
    },
  });

const a = backend("A", certA);
const b = backend("B", certB);
const gateway = new GatewayServer({ bind: "127.0.0.1", front: "bun" });
let port = 0;

const source = { kind: "Gateway", namespace: "test", name: "gw" } as const;

function model(routes: PassthroughListener["routes"], listeners = true): GatewayModel {
  return {
    listeners: [],
    backends: {
      "test/a:443": {
        id: "test/a:443",
        service: { namespace: "test", name: "a", port: 443 },
        protocol: "http",
        endpoints: [{ address: "127.0.0.1", port: a.port as number }],
      },
      "test/b:443": {
        id: "test/b:443",
        service: { namespace: "test", name: "b", port: 443 },
        protocol: "http",
        endpoints: [{ address: "127.0.0.1", port: b.port as number }],
      },
    },
    ...(listeners
      ? {
          passthroughListeners: [{ name: "gateway/test/gw/tls", address: "127.0.0.1", port, source, routes }],
        }
      : {}),
  };
}

const sniRoute = (host: string, backendId: string) => ({
  name: `tlsroute/test/${host}`,
  source: { kind: "TLSRoute", namespace: "test", name: host },
  hostnames: [{ hostname: host, match: host.startsWith("*.") ? "WildcardAnyLabels" : "Exact" } as const],
  backends: [{ backendId, weight: 1 }],
});

/** One HTTPS request over a node:tls socket with SNI `servername`: the peer's CN and the body. */
function request(
  servername: string,
  path = "/",
  body?: Uint8Array,
): Promise<{ cn: string; status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let cn = "";
    const s = connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, () => {
      // Read now: the peer certificate is gone once the socket has closed.
      cn = String(s.getPeerCertificate()?.subject?.CN ?? "");
      const head = `${body ? "POST" : "GET"} ${path} HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n${
        body ? `Content-Length: ${body.length}\r\n` : ""
      }\r\n`;
      s.write(head);
      if (body) s.write(body);
    });
    s.on("data", (d: Buffer) => chunks.push(d));
    s.on("error", reject);
    s.on("close", () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf("\r\n\r\n");
      if (split < 0) return reject(new Error("connection closed without a response"));
      const status = Number(all.subarray(9, 12).toString());
      resolve({ cn, status, body: all.subarray(split + 4) });
    });
  });
}

/** Resolves "closed" when the gateway closes a TLS attempt with SNI `servername` before any handshake. */
function attempt(servername: string): Promise<"closed" | "handshake"> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, () => {
      resolve("handshake");
      s.end();
    });
    s.on("error", () => resolve("closed"));
    s.on("close", () => resolve("closed"));
  });
}

beforeAll(async () => {
  await gateway.apply(model([sniRoute("a.example", "test/a:443"), sniRoute("*.b.example", "test/b:443")]));
  port = gateway.ports().find((p) => p.listener === "gateway/test/gw/tls")?.port ?? 0;
  // Port 0 was bound as a free port; later applies must name the same one.
  await gateway.apply(model([sniRoute("a.example", "test/a:443"), sniRoute("*.b.example", "test/b:443")]));
});

afterAll(async () => {
  await gateway.stop(true);
  a.stop(true);
  b.stop(true);
});

describe("TLS passthrough listener", () => {
  test("SNI a.example reaches backend A and sees A's certificate", async () => {
    const r = await request("a.example");
    expect(r).toMatchObject({ cn: "a.example", status: 200 });
    expect(r.body.toString()).toBe("A");
  });

  test("SNI x.b.example (wildcard) reaches backend B with B's certificate", async () => {
    const r = await request("x.b.example");
    expect(r).toMatchObject({ cn: "b.example", status: 200 });
    expect(r.body.toString()).toBe("B");
  });

  test("an unknown SNI, no SNI and a non-TLS client are closed", async () => {
    expect(await attempt("c.example")).toBe("closed");
    expect(await attempt("b.example")).toBe("closed"); // *.b.example does not cover b.example
    expect(await attempt("")).toBe("closed");
    let closed: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const raw = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: { data: () => {}, close: () => closed() },
    });
    raw.write("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n");
    await done;
  });

  test("large bodies pass both ways intact (backpressure)", async () => {
    const down = await request("a.example", "/?size=8000000");
    expect(down.body.length).toBeGreaterThanOrEqual(8_000_000);
    const up = await request("a.example", "/", new Uint8Array(6_000_000).fill(1));
    expect(up.body.toString()).toContain("A:6000000");
  });

  test("apply swaps routes for new connections and removing the listener closes it", async () => {
    await gateway.apply(model([sniRoute("a.example", "test/b:443")]));
    expect((await request("a.example")).cn).toBe("b.example");
    expect(await attempt("x.b.example")).toBe("closed");
    await gateway.apply(model([], false));
    expect(gateway.ports().some((p) => p.listener === "gateway/test/gw/tls")).toBe(false);
    const refused = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data: () => {} } }).then(
      (s) => {
        s.end();
        return false;
      },
      () => true,
    );
    expect(refused).toBe(true);
  });
});
