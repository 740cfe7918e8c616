import { describe, expect, test } from "bun:test";
import { clientCertificate, testAuthority } from "../../../proxy/testing/certs.ts";
import type { Secret } from "../../../sources/schema/core.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import type { SecretSources } from "../access/client-certificates.ts";
import { readBackendSettings } from "./backend-protocol.ts";

const ref = { kind: "Ingress", namespace: "shop", name: "app" };
const ca = testAuthority("unit-ca");
const pair = clientCertificate(ca, "gatehouse");

function ingress(annotations: Record<string, string>): Ingress {
  const prefixed = Object.fromEntries(
    Object.entries(annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v]),
  );
  return { metadata: { name: "app", namespace: "shop", annotations: prefixed } } as Ingress;
}

function secrets(entries: Record<string, Record<string, string>>): SecretSources {
  const map = new Map<string, Secret>();
  for (const [name, stringData] of Object.entries(entries))
    map.set(`shop/${name}`, { metadata: { name, namespace: "shop" }, stringData } as Secret);
  return { secrets: map, unreadable: [] };
}

const none = secrets({});
const read = (annotations: Record<string, string>, sources = none) =>
  readBackendSettings(ingress(annotations), ref, sources);

describe("backend-protocol", () => {
  test("read case-insensitively and trimmed, as ingress-nginx's validator does", () => {
    expect(read({ "backend-protocol": " grpc " }).settings).toEqual({ protocol: "GRPC" });
    expect(read({ "backend-protocol": "Auto_Http" }).settings?.protocol).toBe("AUTO_HTTP");
  });

  test("HTTP (or nothing) asks for nothing", () => {
    expect(read({ "backend-protocol": "http" })).toEqual({ problems: [] });
    expect(read({})).toEqual({ problems: [] });
  });

  test("an unknown value is an error and HTTP applies", () => {
    const r = read({ "backend-protocol": "AJP" });
    expect(r.settings).toBeUndefined();
    expect(r.problems.map((p) => [p.reason, p.severity])).toEqual([["InvalidAnnotation", "error"]]);
    expect(r.problems[0]?.message).toContain("HTTP/1.1 in cleartext applies");
  });

  test("FCGI is refused with an error; H2C is taken, with an info saying ingress-nginx does not know it", () => {
    const fcgi = read({ "backend-protocol": "FCGI" });
    expect([fcgi.settings?.protocol, fcgi.problems[0]?.reason]).toEqual([
      "FCGI",
      "UnsupportedBackendProtocol",
    ]);
    const h2c = read({ "backend-protocol": "H2C" });
    expect([h2c.settings?.protocol, h2c.problems[0]?.severity]).toEqual(["H2C", "info"]);
  });

  test("proxy-ssl-* without a TLS protocol: one warning naming them, nothing read", () => {
    const r = read({ "backend-protocol": "GRPC", "proxy-ssl-name": "a.test", "proxy-ssl-verify": "on" });
    expect(r.settings).toEqual({ protocol: "GRPC" });
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]?.message).toContain("proxy-ssl-name, nginx.ingress.kubernetes.io/proxy-ssl-verify");
  });
});

describe("proxy-ssl-*", () => {
  const https = (more: Record<string, string>, sources = none) =>
    read({ "backend-protocol": "HTTPS", ...more }, sources);

  test("no Secret: no CA (the public roots), ingress-nginx's off defaults remembered", () => {
    expect(https({}).settings).toEqual({ protocol: "HTTPS", tls: { verifyAsked: false, sniAsked: false } });
  });

  test("proxy-ssl-name: a DNS name, lower-cased, a trailing dot dropped; a variable refused", () => {
    expect(https({ "proxy-ssl-name": "API.Example.com." }).settings?.tls?.serverName).toBe("api.example.com");
    const bad = https({ "proxy-ssl-name": "$host" });
    expect(bad.settings?.tls?.serverName).toBeUndefined();
    expect(bad.problems[0]?.message).toContain("nginx variables are not supported");
  });

  test("proxy-ssl-protocols: TLS 1.2 and 1.3 as a range; older ones reported and left out", () => {
    const v = (value: string) => https({ "proxy-ssl-protocols": value });
    expect(v("TLSv1.2").settings?.tls?.versions).toEqual({ min: "TLSv1.2", max: "TLSv1.2" });
    expect(v("TLSv1.3 TLSv1.2").settings?.tls?.versions).toEqual({ min: "TLSv1.2", max: "TLSv1.3" });
    const old = v("TLSv1 TLSv1.3");
    expect(old.settings?.tls?.versions).toEqual({ min: "TLSv1.3", max: "TLSv1.3" });
    expect(old.problems.map((p) => p.severity)).toEqual(["warning"]);
    const none = v("SSLv3 bogus");
    expect(none.settings?.tls?.versions).toBeUndefined();
    expect(none.problems[0]?.message).toContain('"bogus" is not a TLS version');
  });

  test("proxy-ssl-verify and -server-name: on is remembered, another value reported (off)", () => {
    const r = https({ "proxy-ssl-verify": "on", "proxy-ssl-server-name": "yes" });
    expect(r.settings?.tls).toMatchObject({ verifyAsked: true, sniAsked: false });
    expect(r.problems.map((p) => p.reason)).toEqual(["InvalidAnnotation"]);
  });

  test("a Secret with ca.crt, tls.crt and tls.key: the CA and the client certificate", () => {
    const s = secrets({ full: { "ca.crt": ca.certPem, "tls.crt": pair.certPem, "tls.key": pair.keyPem } });
    const tls = https({ "proxy-ssl-secret": "shop/full" }, s).settings?.tls;
    expect(tls?.caPem).toBe(ca.certPem);
    expect(tls?.clientCertificate).toEqual(pair);
    expect(tls?.invalid).toBeUndefined();
  });

  test("tls.crt without tls.key: the CA only, and a warning", () => {
    const s = secrets({ half: { "ca.crt": ca.certPem, "tls.crt": pair.certPem } });
    const r = https({ "proxy-ssl-secret": "shop/half" }, s);
    expect([r.settings?.tls?.caPem, r.settings?.tls?.clientCertificate]).toEqual([ca.certPem, undefined]);
    expect(r.problems[0]?.message).toContain("tls.crt without tls.key");
  });

  test("unusable Secrets make the TLS invalid (503), each with an error saying why", () => {
    const s = secrets({
      "no-ca": { "tls.crt": pair.certPem, "tls.key": pair.keyPem },
      "bad-ca": { "ca.crt": "not a certificate" },
      "bad-key": { "ca.crt": ca.certPem, "tls.crt": pair.certPem, "tls.key": "nope" },
    });
    const why = (value: string) => {
      const r = https({ "proxy-ssl-secret": value }, s);
      expect(r.problems.map((p) => p.severity)).toEqual(["error"]);
      return r.settings?.tls?.invalid ?? "";
    };
    expect(why("shop/no-ca")).toContain("has no ca.crt");
    expect(why("shop/bad-ca")).toContain("holds no PEM certificate");
    expect(why("shop/bad-key")).toContain("tls.key");
    expect(why("shop/missing")).toContain("not found");
    expect(why("other/no-ca")).toContain("must be in the Ingress's namespace");
    expect(why("just-a-name")).toContain("must be <namespace>/<Secret name>");
  });
});
