import { expect, test } from "bun:test";
import type { TLSCertificate } from "../../../model/index.ts";
import { withClientCAs } from "./client-certificate-hosts.ts";

const cert = (name: string, hostnames: string[]): TLSCertificate => ({
  source: { kind: "Secret", namespace: "ns", name },
  hostnames,
  certPem: `cert-${name}`,
  keyPem: `key-${name}`,
});
const summary = (certs: TLSCertificate[]) =>
  certs.map((c) => `${c.source.name}:${c.hostnames.join(",")}${c.clientCAPem ? `+${c.clientCAPem}` : ""}`);

test("a host's SNI entry takes the certificate that served it and the host's CAs", () => {
  const certs = [cert("default", []), cert("shared", ["a.test", "b.test"]), cert("wild", ["*.w.test"])];
  const cas = new Map([
    ["a.test", "CA1"],
    ["x.w.test", "CA2"],
    ["plain.test", "CA3"],
  ]);
  expect(summary(withClientCAs(certs, cas, [{ name: "alias.test", host: "a.test" }]))).toEqual([
    "default:",
    "shared:b.test",
    "wild:*.w.test",
    "shared:a.test+CA1",
    "wild:x.w.test+CA2",
    "default:plain.test+CA3",
    "default:alias.test+CA1",
  ]);
});

test("an entry left without names goes, except the first (the fallback)", () => {
  const certs = [cert("first", ["a.test"]), cert("only", ["b.test"])];
  const cas = new Map([
    ["a.test", "CA1"],
    ["b.test", "CA2"],
  ]);
  expect(summary(withClientCAs(certs, cas, []))).toEqual(["first:", "first:a.test+CA1", "only:b.test+CA2"]);
});
