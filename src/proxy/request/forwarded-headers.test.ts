import { describe, expect, test } from "bun:test";
import { isSaneRequestId, newRequestId, prepareUpstreamHeaders } from "./forwarded-headers.ts";

describe("prepareUpstreamHeaders", () => {
  const hop = {
    peer: "10.1.1.1",
    peerTrusted: true,
    scheme: "https",
    port: 8443,
    host: "a.example:8443",
  } as const;

  test("strips hop-by-hop headers, including those Connection names", () => {
    const h = new Headers({
      connection: "keep-alive, X-Secret, close",
      "x-secret": "s",
      "keep-alive": "timeout=5",
      te: "trailers",
      upgrade: "h2c",
      "proxy-connection": "keep-alive",
      "x-keep": "k",
      expect: "100-continue",
    });
    prepareUpstreamHeaders(h, hop);
    for (const n of ["connection", "x-secret", "keep-alive", "te", "upgrade", "proxy-connection", "expect"]) {
      expect(h.get(n)).toBeNull();
    }
    expect(h.get("x-keep")).toBe("k");
  });

  test("an untrusted peer's X-Forwarded-For is replaced by the peer; none is sent when the peer is unknown", () => {
    const h = new Headers({ "x-forwarded-for": "6.6.6.6" });
    prepareUpstreamHeaders(h, { ...hop, peerTrusted: false });
    expect(h.get("x-forwarded-for")).toBe("10.1.1.1");
    const unknown = new Headers({ "x-forwarded-for": "6.6.6.6" });
    prepareUpstreamHeaders(unknown, { ...hop, peer: "", peerTrusted: false });
    expect(unknown.get("x-forwarded-for")).toBeNull();
  });

  test("a trusted peer's X-Forwarded-For is appended to; this hop's fields are overwritten", () => {
    const h = new Headers({
      "x-forwarded-for": "1.1.1.1",
      "x-forwarded-proto": "http",
      "x-forwarded-port": "1",
    });
    prepareUpstreamHeaders(h, hop);
    expect(h.get("x-forwarded-for")).toBe("1.1.1.1, 10.1.1.1");
    expect(h.get("x-forwarded-proto")).toBe("https");
    expect(h.get("x-forwarded-host")).toBe("a.example:8443");
    expect(h.get("x-forwarded-port")).toBe("8443");
  });

  test("keeps a sane request id, replaces others", () => {
    const keep = new Headers({ "x-request-id": "abc-123" });
    expect(prepareUpstreamHeaders(keep, hop)).toBe("abc-123");
    const bad = new Headers({ "x-request-id": "x".repeat(129) });
    const id = prepareUpstreamHeaders(bad, hop);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(bad.get("x-request-id")).toBe(id);
  });

  test("generated ids differ", () => {
    expect(newRequestId()).not.toBe(newRequestId());
  });

  test("isSaneRequestId", () => {
    expect(isSaneRequestId("a b")).toBe(false);
    expect(isSaneRequestId("")).toBe(false);
    expect(isSaneRequestId("~!#")).toBe(true);
  });
});
