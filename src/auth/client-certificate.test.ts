import { describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import type { RouteClientCertificate } from "../model/index.ts";
import { normaliseHost } from "../proxy/match/host.ts";
import { clientCertificate, testAuthority } from "../proxy/testing/certs.ts";
import {
  checkClientCertificate,
  compileClientCertificate,
  type HandshakeView,
  rfc2253,
} from "./client-certificate.ts";

const ca = testAuthority("unit-clients");
const alice = clientCertificate(ca, "alice");
const der = (pem: string) => Buffer.from(new X509Certificate(pem).raw);
const leaf = der(alice.certPem);
const root = der(ca.certPem);
const base: RouteClientCertificate = { verify: "on", depth: 1, passCertificate: false };
const session = (
  authorized: boolean,
  chain: Buffer[] = [leaf, root],
  servername = "a.example",
): HandshakeView => ({
  servername,
  authorized,
  chain,
});
const check = (d: Partial<RouteClientCertificate>, view: HandshakeView, host = "a.example:8443") => {
  const cc = compileClientCertificate({ ...base, ...d });
  if (cc === undefined) throw new Error("no demand");
  return checkClientCertificate(cc, view, normaliseHost(host), "gatehouse");
};
const status = (r: ReturnType<typeof check>) => (r.ok ? 200 : r.response.status);

describe("checkClientCertificate", () => {
  test("verify on: a verified chain passes with nginx's headers; none and a bad one are 400", async () => {
    const ok = check({ passCertificate: true }, session(true));
    expect(ok.ok && Object.fromEntries(ok.set)).toEqual({
      "ssl-client-verify": "SUCCESS",
      "ssl-client-subject-dn": "CN=alice",
      "ssl-client-issuer-dn": "CN=unit-clients",
      "ssl-client-cert": encodeURIComponent(alice.certPem),
    });
    const none = check({}, session(false, []));
    expect(none.ok ? "" : await none.response.text()).toBe("No required SSL certificate was sent\n");
    const bad = check({}, session(false));
    expect(bad.ok ? "" : await bad.response.text()).toBe("The SSL certificate error\n");
  });

  test("depth: a chain longer than depth + 1 is a bad certificate", () => {
    expect(status(check({ depth: 1 }, session(true, [leaf, leaf, root])))).toBe(400);
    expect(status(check({ depth: 2 }, session(true, [leaf, leaf, root])))).toBe(200);
  });

  test("optional allows none, optional_no_ca allows anything, off asks nothing", () => {
    const none = check({ verify: "optional" }, session(false, []));
    expect(none.ok && none.set).toEqual([["ssl-client-verify", "NONE"]]);
    expect(status(check({ verify: "optional" }, session(false)))).toBe(400);
    const lax = check({ verify: "optional_no_ca" }, session(false));
    expect(lax.ok && lax.set[0]?.[1].startsWith("FAILED:")).toBe(true);
    expect(status(check({ verify: "off" }, undefined))).toBe(200);
  });

  test("Host must be the SNI name (port and case aside); plain HTTP has no certificate", () => {
    expect(status(check({}, session(true), "A.Example"))).toBe(200);
    expect(status(check({}, session(true), "b.example"))).toBe(421);
    expect(status(check({}, undefined))).toBe(400);
    // One trailing dot on either side, as routing and the SNI table normalise; no SNI is never this host.
    expect(status(check({}, session(true, [leaf, root], "A.example."), "a.example."))).toBe(200);
    expect(status(check({}, session(true, [leaf, root], "a.example."), "a.example"))).toBe(200);
    expect(status(check({}, session(true, [leaf, root], "a.example.."), "a.example."))).toBe(421);
    expect(status(check({}, session(true, [leaf, root], ""), ""))).toBe(421);
  });

  test("off: a presented certificate, verified or not, is ignored; match-cn sees nginx's empty subject", () => {
    const ignored = check({ verify: "off", passCertificate: true }, session(true));
    expect(ignored.ok && ignored.set).toEqual([["ssl-client-verify", "NONE"]]);
    expect(status(check({ verify: "off", matchCN: "CN=alice" }, session(false)))).toBe(403);
    expect(status(check({ verify: "off", matchCN: "CN=alice" }, "unknown"))).toBe(403);
  });

  test("an error page turns the 400s into a 302; match-cn is 403; refused is 403; unknown is 500", () => {
    const r = check({ errorPage: "/cert-error" }, session(false, []));
    expect(r.ok ? undefined : r.response.headers.get("location")).toBe("/cert-error");
    expect(status(check({ matchCN: "CN=bob" }, session(true)))).toBe(403);
    expect(status(check({ matchCN: "CN=ali" }, session(true)))).toBe(200);
    expect(status(check({ verify: "optional", matchCN: "CN=alice" }, session(false, [])))).toBe(403);
    expect(status(check({ refused: "bad CA" }, session(true)))).toBe(403);
    expect(status(check({}, "unknown"))).toBe(500);
    expect(status(check({ verify: "off" }, "unknown"))).toBe(200);
  });

  test("SNI seen, certificate not (node:http2): another host is 421 (coalescing), the same host 500", () => {
    const unseen = (servername: string): HandshakeView => ({ servername, unseen: true });
    expect(status(check({}, unseen("b.example"), "a.example"))).toBe(421);
    expect(status(check({ verify: "optional_no_ca" }, unseen(""), "a.example"))).toBe(421);
    expect(status(check({}, unseen("A.example."), "a.example"))).toBe(500);
    expect(status(check({ verify: "optional_no_ca" }, unseen("a.example"), "a.example"))).toBe(500);
    expect(status(check({ verify: "off" }, unseen("b.example"), "a.example"))).toBe(200);
  });
});

test("rfc2253: most specific first, specials escaped, non-ASCII as hex bytes", () => {
  expect(rfc2253("C=US\nO=Acme, Inc\nCN=alice")).toBe("CN=alice,O=Acme\\, Inc,C=US");
  expect(rfc2253("CN=zoë")).toBe("CN=zo\\C3\\AB");
});
