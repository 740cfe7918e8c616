import { describe, expect, test } from "bun:test";
import type { RequestContext } from "../../filters/filter-types.ts";
import { RELAYED_CLIENT_HEADER, RELAYED_PROTOCOL_HEADER } from "../../request/client-address.ts";
import { parseRelayedTls, RELAYED_TLS_HEADER } from "../../request/client-tls.ts";
import { isSaneRequestId, prepareUpstreamHeaders } from "../../request/forwarded-headers.ts";
import { claimEditOf } from "../edge-guards.ts";
import { scratch } from "../outbox.ts";
import { internalHead } from "../relayed-exchange.ts";
import { filteredUpstreamHead, plainUpstreamHead, type UpstreamRequest } from "./head-to-upstream.ts";
import { findHeadEnd, parseRequestHead, type RequestHead } from "./request-head.ts";

/** The head of `req` as latin1 text, wherever it was built. */
function upstreamHeadText(req: UpstreamRequest): string {
  const h = req.head;
  if (typeof h === "string") return h;
  return Buffer.from(typeof h === "number" ? scratch().subarray(0, h) : h).toString("latin1");
}

function head(text: string): RequestHead {
  const buf = Buffer.from(text, "latin1");
  const h = parseRequestHead(buf, 0, findHeadEnd(buf, 0, buf.length));
  if (typeof h === "number") throw new Error(`refused with ${h}`);
  return h;
}

/** Field lines of a serialised head → lower-case name → values joined as Headers does. */
function fields(wire: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of wire.split("\r\n").slice(1)) {
    if (line === "") break;
    const i = line.indexOf(":");
    const name = line.slice(0, i).toLowerCase();
    const value = line.slice(i + 1).trim();
    const had = out.get(name);
    // As Headers joins them (Cookie with "; ").
    out.set(name, had === undefined ? value : `${had}${name === "cookie" ? "; " : ", "}${value}`);
  }
  return out;
}

// A trusted peer: the client's X-Forwarded-For is kept and the peer appended (the untrusted case below).
const hop = { peer: "10.1.2.3", peerTrusted: true, scheme: "http" as const, port: 8080 };

describe("plainUpstreamHead", () => {
  test("gives the fields forwarded-headers.ts gives (the Bun front's rules)", () => {
    const text =
      "GET /p?q=1 HTTP/1.1\r\nHost: a.example\r\nX-Forwarded-For: 1.1.1.1\r\nX-Forwarded-For: 2.2.2.2\r\n" +
      "X-Forwarded-Proto: https\r\nX-Forwarded-Port: 1\r\nX-Request-Id: abc\r\nConnection: keep-alive, X-Hop\r\n" +
      "X-Hop: 1\r\nTE: trailers\r\nKeep-Alive: 5\r\nUpgrade: h2c\r\nExpect: 100-continue\r\nAccept: */*\r\n\r\n";
    const h = head(text);
    const ours = fields(
      upstreamHeadText(plainUpstreamHead(h, { path: "/p", query: "?q=1" }, hop, "127.0.0.1:9")),
    );
    const reference = new Headers();
    for (let i = 0; i < h.names.length; i++) reference.append(h.names[i] as string, h.values[i] as string);
    prepareUpstreamHeaders(reference, { ...hop, host: h.host });
    expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(reference.entries()));
  });

  test("an untrusted peer's X-Forwarded-For is dropped: the peer alone goes upstream, as on the Bun front", () => {
    const h = head(
      "GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 6.6.6.6\r\nX-Forwarded-For: 7.7.7.7\r\n\r\n",
    );
    const untrusted = { ...hop, peerTrusted: false };
    const ours = fields(upstreamHeadText(plainUpstreamHead(h, { path: "/", query: "" }, untrusted, "b")));
    expect(ours.get("x-forwarded-for")).toBe("10.1.2.3");
    const reference = new Headers({ "x-forwarded-for": "6.6.6.6, 7.7.7.7" });
    prepareUpstreamHeaders(reference, { ...untrusted, host: "a" });
    expect(reference.get("x-forwarded-for")).toBe("10.1.2.3");
  });

  test("absolute-form: one Host line with the target's authority, with or without a Host field", () => {
    for (const hostLine of ["Host: probe.local\r\n", "Host: a\r\nHost: b\r\n"]) {
      const h = head(`GET http://other.local:81/p HTTP/1.1\r\n${hostLine}Accept: x\r\n\r\n`);
      const wire = upstreamHeadText(plainUpstreamHead(h, { path: "/p", query: "" }, hop, "127.0.0.1:9"));
      expect(wire.match(/^host: .*$/gim)).toEqual(["Host: other.local:81"]);
      expect(fields(wire).get("accept")).toBe("x");
    }
  });

  test("random heads: the Bun front's fields, the client's order, nothing made up", () => {
    let seed = 1;
    const r = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return (seed >>> 8) % n;
    };
    const names = [
      "Host",
      "Accept",
      "X-Custom",
      "x-custom",
      "X-Forwarded-For",
      "X-Request-Id",
      "Connection",
      "Keep-Alive",
      "TE",
      "X-Hop",
      "Cookie",
      "User-Agent",
      "X-Unknown-Long-Name",
      "Content-Type",
      "Upgrade",
    ];
    const values = ["a.example", "1.2.3.4", "v", "x-hop, keep-alive", "x-custom", "caf\u00e9", "a,b"];
    const cased = (n: string) =>
      [...n].map((c) => (r(3) === 0 ? c.toUpperCase() : r(2) ? c.toLowerCase() : c)).join("");
    const ows = () => ["", " ", "  ", "\t"][r(4)] as string;
    for (let round = 0; round < 400; round++) {
      let text = "GET /p HTTP/1.1\r\nHost: a.example\r\n";
      const n = r(10);
      for (let i = 0; i < n; i++) {
        const name = cased(names[r(names.length)] as string);
        text += `${name}:${ows()}${values[r(values.length)]}${ows()}\r\n`;
      }
      const h = head(`${text}\r\n`);
      const wire = upstreamHeadText(plainUpstreamHead(h, { path: "/p", query: "" }, hop, "127.0.0.1:9"));
      const reference = new Headers();
      for (let i = 0; i < h.names.length; i++) reference.append(h.names[i] as string, h.values[i] as string);
      prepareUpstreamHeaders(reference, { ...hop, host: h.host });
      const ours = fields(wire);
      // The request id is ours when the client's is missing or not sane: the same rule, a new value.
      if (ours.get("x-request-id") !== reference.get("x-request-id")) {
        const sentId = h.names.flatMap((x, i) => (x === "x-request-id" ? [h.values[i] as string] : []));
        expect(sentId.length === 0 || !isSaneRequestId(sentId.join(", "))).toBe(true);
        ours.delete("x-request-id");
        reference.delete("x-request-id");
      }
      expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(reference.entries()));
      // Client fields kept appear in the order sent (the Host line first, as sent).
      const sent = h.names.filter((x) => ours.has(x) && !x.startsWith("x-forwarded") && x !== "x-request-id");
      const got = wire
        .split("\r\n")
        .slice(1, -2)
        .map((l) => l.slice(0, l.indexOf(":")).toLowerCase())
        .filter((x) => sent.includes(x));
      expect(got).toEqual(sent.filter((x, i) => x !== "host" || sent.indexOf("host") === i));
    }
  });

  test("one Host line even when the client sent two; the request line is the routed target", () => {
    const h = head("GET /x/../y HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n");
    const wire = upstreamHeadText(plainUpstreamHead(h, { path: "/y", query: "" }, hop, "127.0.0.1:9"));
    expect(wire.startsWith("GET /y HTTP/1.1\r\n")).toBe(true);
    expect(wire.match(/^host:/gim)?.length).toBe(1);
    expect(fields(wire).get("host")).toBe("a.example, b.example");
  });

  test("framing is ours: a chunked body stays chunked, a length is restated", () => {
    const te = head("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n");
    const wire = upstreamHeadText(plainUpstreamHead(te, { path: "/", query: "" }, hop, "h"));
    expect(fields(wire).get("transfer-encoding")).toBe("chunked");
    expect(fields(wire).has("content-length")).toBe(false);
    const cl = head("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\n");
    expect(
      fields(upstreamHeadText(plainUpstreamHead(cl, { path: "/", query: "" }, hop, "h"))).get(
        "content-length",
      ),
    ).toBe("3");
  });
});

describe("the internal relay header on the fast path", () => {
  test("a client's copy never goes upstream, with or without request filters", () => {
    const h = head(`GET / HTTP/1.1\r\nHost: a\r\n${RELAYED_CLIENT_HEADER}: 6.6.6.6\r\n\r\n`);
    const plain = upstreamHeadText(plainUpstreamHead(h, { path: "/", query: "" }, hop, "h"));
    const filtered = upstreamHeadText(filteredUpstreamHead(h, { path: "/", query: "" }, hop, "h", "", []));
    expect(fields(plain).has(RELAYED_CLIENT_HEADER)).toBe(false);
    expect(fields(filtered).has(RELAYED_CLIENT_HEADER)).toBe(false);
  });
});

describe("internalHead (slow path)", () => {
  test("keeps the request as sent, replaces any relayed-client field, and keeps the connection reusable", () => {
    const h = head(
      "GET /a/%2e%2e/b HTTP/1.1\r\nHost: a.example\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\n" +
        `${RELAYED_CLIENT_HEADER}: 6.6.6.6\r\nExpect: 100-continue\r\n\r\n`,
    );
    const wire = internalHead(h, "10.1.2.3");
    expect(wire.startsWith("GET /a/%2e%2e/b HTTP/1.1\r\n")).toBe(true);
    const f = fields(wire);
    expect(f.get(RELAYED_CLIENT_HEADER)).toBe("10.1.2.3");
    expect(f.get("connection")).toBe("x-hop");
    expect(f.get("x-hop")).toBe("1");
    expect(f.has("expect")).toBe(false);
    expect(f.has(RELAYED_PROTOCOL_HEADER)).toBe(false);
  });

  test("absolute-form: origin-form target and one Host line, the authority routing saw", () => {
    const h = head("GET http://other.local/x?q HTTP/1.1\r\nHost: probe.local\r\nX-A: 1\r\n\r\n");
    const wire = internalHead(h, "1.2.3.4");
    expect(wire.startsWith("GET /x?q HTTP/1.1\r\n")).toBe(true);
    expect(wire.match(/^host:/gim)).toEqual(["Host:"]);
    expect(fields(wire).get("host")).toBe("other.local");
  });

  test("HTTPS: the TLS session travels in its own field; a client's field of that name never does", () => {
    const forged = `${RELAYED_TLS_HEADER}: 1;admin.example;AAAA\r\n`;
    const h = head(`GET / HTTP/1.1\r\nHost: a\r\n${forged}\r\n`);
    expect(fields(internalHead(h, "1.2.3.4")).has(RELAYED_TLS_HEADER)).toBe(false);
    const leaf = Buffer.from([1, 2, 3]);
    const session = { servername: "a\r\nx", authorized: true, peerCertificates: () => [leaf] };
    const value = fields(internalHead(h, "1.2.3.4", session)).get(RELAYED_TLS_HEADER) ?? "";
    expect(value).not.toContain("\r");
    expect(parseRelayedTls(value)).toEqual({ servername: "a\r\nx", authorized: true, chain: [leaf] });
  });

  test("an upgrade keeps Upgrade and its Connection token", () => {
    const h = head(
      "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: k\r\n\r\n",
    );
    const f = fields(internalHead(h, "1.2.3.4"));
    expect([f.get("connection"), f.get("upgrade"), f.get("sec-websocket-key")]).toEqual([
      "upgrade",
      "websocket",
      "k",
    ]);
  });

  test("HTTP/1.0 keeps its version, names it for the access log and asks for keep-alive on the internal connection", () => {
    const wire = internalHead(
      head(`GET / HTTP/1.0\r\n${RELAYED_PROTOCOL_HEADER}: HTTP/2.0\r\n\r\n`),
      "1.2.3.4",
    );
    expect(wire.startsWith("GET / HTTP/1.0\r\n")).toBe(true);
    expect(fields(wire).get("connection")).toBe("keep-alive");
    expect(fields(wire).get(RELAYED_PROTOCOL_HEADER)).toBe("HTTP/1.0");
    expect(wire.split(RELAYED_PROTOCOL_HEADER).length).toBe(2); // the client's own is dropped
  });
});

test("a head too large for the scratch buffer gets a buffer of its own, with the same fields", () => {
  const reference = (size: number) =>
    `GET /big HTTP/1.1\r\nHost: a\r\nX-Big: ${"v".repeat(size)}\r\n` +
    "X-Forwarded-For: 10.0.0.1, 10.0.0.2, 10.0.0.3\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: a\r\n" +
    "X-Forwarded-Port: 8080\r\nX-Request-Id: r1\r\n\r\n";
  for (const size of [1000, 40_000, 60_000]) {
    const h = head(
      `GET /big HTTP/1.1\r\nHost: a\r\nX-Big: ${"v".repeat(size)}\r\nX-Forwarded-For: 10.0.0.1\r\n` +
        "X-Forwarded-For: 10.0.0.2\r\nX-Request-Id: r1\r\n\r\n",
    );
    const req = plainUpstreamHead(h, { path: "/big", query: "" }, { ...hop, peer: "10.0.0.3" }, "h");
    // 60 KB of fields can need more than the 96 KB scratch holds, by the bound: a buffer of its own.
    expect(typeof req.head === "number").toBe(size < 40_001);
    expect(upstreamHeadText(req)).toBe(reference(size));
  }
});

describe("claim headers applied to the byte-built head (edge-guards.ts claimEditOf)", () => {
  const outcome = (remove: string[], set: [string, string][]) =>
    ({ ok: true, identity: {}, removeHeaders: remove, setHeaders: set }) as unknown as Parameters<
      typeof claimEditOf
    >[0];

  test("the client's fields of those names are dropped in any case, the claims added: as the Headers path", () => {
    const text =
      "GET /p HTTP/1.1\r\nHost: a\r\nX-User: mallory\r\nx-user: again\r\nX-Groups: evil\r\nAccept: */*\r\n\r\n";
    const h = head(text);
    const remove = ["X-User", "X-Groups"];
    const set: [string, string][] = [["X-User", "alice"]];
    const edit = claimEditOf(outcome(remove, set));
    expect(edit).toBeDefined();
    const ours = fields(upstreamHeadText(plainUpstreamHead(h, { path: "/p", query: "" }, hop, "h", edit)));
    const guard = (ctx: RequestContext) => {
      for (const n of remove) ctx.headers.delete(n);
      for (const [n, v] of set) ctx.headers.set(n, v);
      return undefined;
    };
    const reference = fields(
      upstreamHeadText(filteredUpstreamHead(h, { path: "/p", query: "" }, hop, "h", "", [guard])),
    );
    ours.delete("x-request-id");
    reference.delete("x-request-id");
    expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(reference));
    expect(ours.get("x-user")).toBe("alice");
    expect(ours.has("x-groups")).toBe(false);
    expect(ours.get("accept")).toBe("*/*");
  });

  test("left to the Headers path: names the gateway owns, a name set twice, bytes above 0x7e", () => {
    expect(claimEditOf(outcome(["X-Forwarded-For"], []))).toBeUndefined();
    expect(claimEditOf(outcome([], [["Host", "x"]]))).toBeUndefined();
    expect(claimEditOf(outcome([], [["connection", "close"]]))).toBeUndefined();
    expect(
      claimEditOf(
        outcome(
          [],
          [
            ["X-A", "1"],
            ["x-a", "2"],
          ],
        ),
      ),
    ).toBeUndefined();
    expect(claimEditOf(outcome([], [["X-Name", "Jos\u00e9"]]))).toBeUndefined();
    expect(claimEditOf(outcome(["X-A"], [["X-B", "b c"]]))).toEqual({
      remove: ["x-a", "x-b"],
      lines: "X-B: b c\r\n",
    });
  });
});
