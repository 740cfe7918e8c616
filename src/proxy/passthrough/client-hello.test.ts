import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server } from "node:net";
import { connect } from "node:tls";
import { maxClientHelloBytes, parseClientHello } from "./client-hello.ts";

/**
 * Real ClientHellos: a node:tls client connects to a plain TCP server that keeps the first bytes it
 * receives and closes once they parse (the handshake never completes, which is all we need).
 */
let server: Server;
let port = 0;
const received: Buffer[] = [];

beforeAll(async () => {
  server = createServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (parseClientHello(buf).kind !== "incomplete") {
        received.push(buf);
        sock.destroy();
      }
    });
    sock.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(() => server.close());

async function captureHello(servername: string | undefined): Promise<Buffer> {
  const before = received.length;
  await new Promise<void>((resolve) => {
    const s = connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false });
    s.on("error", () => resolve());
    s.on("close", () => resolve());
  });
  const hello = received[before];
  if (hello === undefined) throw new Error("no ClientHello captured");
  return hello;
}

describe("parseClientHello on real node:tls hellos", () => {
  test("reads the SNI name, lower-cased", async () => {
    const hello = await captureHello("A.Example");
    expect(parseClientHello(hello)).toEqual({ kind: "hello", serverName: "a.example" });
  });

  test("a client that sends no SNI gives serverName undefined", async () => {
    // node:tls sends no server_name for an empty servername.
    const hello = await captureHello("");
    expect(parseClientHello(hello)).toEqual({ kind: "hello", serverName: undefined });
  });

  test("every truncation is incomplete, never an error; the whole hello parses", async () => {
    const hello = await captureHello("b.example");
    for (let n = 0; n < hello.length; n++)
      expect(parseClientHello(hello.subarray(0, n)).kind).toBe("incomplete");
    expect(parseClientHello(hello)).toEqual({ kind: "hello", serverName: "b.example" });
  });

  test("a hello fragmented over two TLS records parses to the same name", async () => {
    const hello = await captureHello("frag.example");
    const body = hello.subarray(5, 5 + hello.readUInt16BE(3));
    const record = (part: Buffer) =>
      Buffer.concat([Buffer.from([0x16, 3, 1, part.length >> 8, part.length & 0xff]), part]);
    const split = Buffer.concat([record(body.subarray(0, 2)), record(body.subarray(2))]);
    expect(parseClientHello(split)).toEqual({ kind: "hello", serverName: "frag.example" });
    expect(parseClientHello(split.subarray(0, split.length - 1)).kind).toBe("incomplete");
  });

  test("random corruption of a real hello never throws", async () => {
    const hello = await captureHello("fuzz.example");
    let seed = 42;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    for (let i = 0; i < 3000; i++) {
      const copy = Buffer.from(hello);
      for (let k = 0; k <= i % 4; k++) copy[rand() % copy.length] = rand() & 0xff;
      const r = parseClientHello(copy.subarray(0, 1 + (rand() % copy.length)));
      expect(["incomplete", "hello", "invalid"]).toContain(r.kind);
    }
  });
});

/** A minimal hand-built ClientHello with the given extensions (type, data). */
function buildHello(extensions: [number, number[]][], recordLength?: number): Uint8Array {
  const ext = extensions.flatMap(([type, data]) => [
    type >> 8,
    type & 0xff,
    data.length >> 8,
    data.length & 0xff,
    ...data,
  ]);
  const body = [
    3,
    3,
    ...new Array(32).fill(7),
    0,
    0,
    2,
    0x13,
    0x01,
    1,
    0,
    ext.length >> 8,
    ext.length & 0xff,
    ...ext,
  ];
  const hs = [1, 0, body.length >> 8, body.length & 0xff, ...body];
  const len = recordLength ?? hs.length;
  return new Uint8Array([0x16, 3, 1, len >> 8, len & 0xff, ...hs]);
}

function sni(...names: string[]): [number, number[]] {
  const entries = names.flatMap((n) => [0, n.length >> 8, n.length & 0xff, ...Buffer.from(n)]);
  return [0, [entries.length >> 8, entries.length & 0xff, ...entries]];
}

describe("parseClientHello on malformed input", () => {
  test("the hand-built hello parses (the builder is right)", () => {
    expect(parseClientHello(buildHello([sni("x.example")]))).toEqual({
      kind: "hello",
      serverName: "x.example",
    });
  });

  test("plain HTTP is not a TLS handshake", () => {
    expect(parseClientHello(Buffer.from("GET / HTTP/1.1\r\nHost: a\r\n\r\n"))).toMatchObject({
      kind: "invalid",
    });
  });

  test("a handshake that is not a ClientHello is refused", () => {
    const h = buildHello([sni("x.example")]);
    h[5] = 2; // ServerHello
    expect(parseClientHello(h)).toMatchObject({ kind: "invalid" });
  });

  test("a record longer than 16 KB is refused before it is buffered", () => {
    expect(parseClientHello(new Uint8Array([0x16, 3, 1, 0xff, 0xff]))).toMatchObject({ kind: "invalid" });
    expect(maxClientHelloBytes).toBe(16384);
  });

  test("a handshake length beyond 16 KB is refused", () => {
    const h = buildHello([sni("x.example")]);
    h[6] = 0x01; // handshake length + 65536: more records would be needed
    expect(parseClientHello(h)).toMatchObject({ kind: "invalid" }); // > 16 KB
  });

  test("a server_name list length running past the extension is refused", () => {
    const [, data] = sni("x.example");
    data[1] = (data[1] as number) + 5;
    expect(parseClientHello(buildHello([[0, data]]))).toMatchObject({ kind: "invalid" });
  });

  test("a repeated server_name extension or two host_names are refused", () => {
    expect(parseClientHello(buildHello([sni("a.example"), sni("b.example")]))).toMatchObject({
      kind: "invalid",
    });
    expect(parseClientHello(buildHello([sni("a.example", "b.example")]))).toMatchObject({ kind: "invalid" });
  });

  test("host names with characters outside DNS names are refused", () => {
    for (const bad of ["a b.example", "a.example.", "ä.example", "a..example", "a/example"])
      expect(parseClientHello(buildHello([sni(bad)]))).toMatchObject({ kind: "invalid" });
  });

  test("other extensions are skipped; no extensions means no SNI", () => {
    expect(parseClientHello(buildHello([[0x0a, [0, 2, 0, 0x1d]], sni("y.example")]))).toEqual({
      kind: "hello",
      serverName: "y.example",
    });
    expect(parseClientHello(buildHello([]))).toEqual({ kind: "hello", serverName: undefined });
  });
});
