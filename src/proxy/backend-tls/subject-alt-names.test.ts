import { expect, test } from "bun:test";
import { dnsNameCovers, parseSubjectAltName, subjectAltNameCheck } from "./subject-alt-names.ts";

test("subjectAltName text: DNS and URI names, quoted values read whole, other types ignored", () => {
  expect(
    parseSubjectAltName(
      'DNS:ABC.example.com, IP Address:10.0.0.1, URI:spiffe://a/b, URI:"http://x/?a=1, b=2", DNS:*.w.org',
    ),
  ).toEqual({ dns: ["abc.example.com", "*.w.org"], uri: ["spiffe://a/b", "http://x/?a=1, b=2"] });
  expect(parseSubjectAltName("")).toEqual({ dns: [], uri: [] });
});

test("a wildcard certificate name covers exactly one more label", () => {
  expect(dnsNameCovers("*.example.com", "a.example.com")).toBe(true);
  expect(dnsNameCovers("*.example.com", "a.b.example.com")).toBe(false);
  expect(dnsNameCovers("*.example.com", "example.com")).toBe(false);
  expect(dnsNameCovers("a.example.com", "a.example.com")).toBe(true);
  expect(dnsNameCovers("a.example.com", "b.example.com")).toBe(false);
});

test("the check passes on any listed name the certificate has, and names what it wanted when none", () => {
  const check = subjectAltNameCheck([
    { type: "Hostname", value: "API.example.com" },
    { type: "URI", value: "spiffe://cluster/ns/app" },
  ]);
  expect(check("ignored", { subjectaltname: "DNS:*.example.com" })).toBeUndefined();
  expect(check("ignored", { subjectaltname: "URI:spiffe://cluster/ns/app" })).toBeUndefined();
  const err = check("ignored", { subjectaltname: "DNS:api.example.org, URI:spiffe://cluster/ns/other" });
  expect(err?.message).toContain("API.example.com, spiffe://cluster/ns/app");
  expect((err as Error & { code?: string }).code).toBe("ERR_TLS_CERT_ALTNAME_INVALID");
  // A URI name is compared exactly: not as a DNS name, not as a prefix.
  expect(check("ignored", { subjectaltname: "URI:spiffe://cluster/ns/app/x" })).toBeInstanceOf(Error);
  expect(check("ignored", {})).toBeInstanceOf(Error);
});
