import { describe, expect, test } from "bun:test";
import {
  clientTls,
  parseRelayedTls,
  RELAYED_TLS_HEADER,
  relayedTlsValue,
  takeRelayedTls,
} from "./client-tls.ts";

describe("relayed TLS session", () => {
  const chain = [Buffer.from("leaf"), Buffer.from("issuer")];

  test("round trip, with any SNI text kept header-safe", () => {
    for (const servername of ["a.example", "", "x;y,z=%", "\r\nInjected: 1"]) {
      const value = relayedTlsValue({ servername, authorized: false, chain });
      expect(value).toMatch(/^[\x21-\x7e]*$/);
      expect(parseRelayedTls(value)).toEqual({ servername, authorized: false, chain });
    }
  });

  test("anything else is not a session", () => {
    for (const bad of ["", "2;a;", "1;a", "1;a;not base64!", "1;%zz;", "1;a;b;c"])
      expect(parseRelayedTls(bad)).toBeUndefined();
  });

  test("the internal listener moves the field out of the request", () => {
    const value = relayedTlsValue({ servername: "a.example", authorized: true, chain });
    const req = new Request("http://internal/", { headers: { [RELAYED_TLS_HEADER]: value } });
    takeRelayedTls(req);
    expect(req.headers.has(RELAYED_TLS_HEADER)).toBe(false);
    expect(clientTls(req)).toEqual({ servername: "a.example", authorized: true, chain });
    expect(clientTls(new Request("http://internal/"))).toBeUndefined();
  });
});
