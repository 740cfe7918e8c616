import { describe, expect, test } from "bun:test";
import { testAuthority } from "../../../proxy/testing/certs.ts";
import type { BackendTLSPolicy } from "../../../sources/schema/backend-tls-policy.ts";
import type { ConfigMap } from "../../../sources/schema/core.ts";
import { readBackendTLSPolicy } from "./policy.ts";

const ca = testAuthority("backend-ca").certPem;
const configMap = (name: string, data: Record<string, string>): ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "app" },
  data,
});
const sources = {
  configMaps: new Map([
    ["app/ca", configMap("ca", { "ca.crt": ca })],
    ["app/two", configMap("two", { "ca.crt": `${ca}\n${ca}` })],
    ["app/empty", configMap("empty", {})],
    ["app/garbage", configMap("garbage", { "ca.crt": "not a certificate" })],
  ]),
  unreadable: [{ kind: "ConfigMap" as const, namespace: "app", name: "forbidden", why: "RBAC says no" }],
};
const policy = (
  validation: BackendTLSPolicy["spec"]["validation"],
  options?: Record<string, string>,
): BackendTLSPolicy => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "BackendTLSPolicy",
  metadata: { name: "p", namespace: "app" },
  spec: {
    targetRefs: [{ group: "", kind: "Service", name: "web" }],
    validation,
    ...(options ? { options } : {}),
  },
});
const cm = (name: string) => ({ group: "", kind: "ConfigMap", name });

describe("readBackendTLSPolicy", () => {
  test("a CA ConfigMap, the hostname as SNI, and subject alt names", () => {
    const got = readBackendTLSPolicy(
      policy({
        caCertificateRefs: [cm("ca"), cm("two")],
        hostname: "web.example.com",
        subjectAltNames: [
          { type: "Hostname", hostname: "*.example.com" },
          { type: "URI", uri: "spiffe://example.com/web" },
        ],
      }),
      sources,
    );
    expect(got.accepted).toEqual({ ok: true });
    expect(got.resolvedRefs).toEqual({ ok: true });
    expect(got.tls?.serverName).toBe("web.example.com");
    expect(got.tls?.caPem).toBe(`${ca}\n${ca}\n${ca}`);
    expect(got.tls?.subjectAltNames).toEqual([
      { type: "Hostname", value: "*.example.com" },
      { type: "URI", value: "spiffe://example.com/web" },
    ]);
  });

  test("System: the runtime's roots, no caPem", () => {
    const got = readBackendTLSPolicy(
      policy({ wellKnownCACertificates: "System", hostname: "a.example" }),
      sources,
    );
    expect(got.tls).toEqual({ serverName: "a.example" });
  });

  test("each bad reference is named; none good: NoValidCACertificate and no TLS to use", () => {
    const got = readBackendTLSPolicy(
      policy({
        caCertificateRefs: [
          { group: "invalid.io", kind: "InvalidKind", name: "x" },
          cm("missing"),
          cm("empty"),
          cm("garbage"),
          cm("forbidden"),
        ],
        hostname: "a.example",
      }),
      sources,
    );
    expect(got.tls).toBeUndefined();
    expect(got.accepted).toMatchObject({ ok: false, reason: "NoValidCACertificate" });
    expect(got.resolvedRefs).toMatchObject({ ok: false, reason: "InvalidKind" });
    const message = got.resolvedRefs.ok ? "" : got.resolvedRefs.message;
    expect(message).toContain("caCertificateRefs[0]: invalid.io/InvalidKind is not supported");
    expect(message).toContain("caCertificateRefs[1]: ConfigMap app/missing not found");
    expect(message).toContain("caCertificateRefs[2]: ConfigMap app/empty has no ca.crt");
    expect(message).toContain("caCertificateRefs[3]: ConfigMap app/garbage: ca.crt holds no PEM certificate");
    expect(message).toContain(
      "caCertificateRefs[4]: ConfigMap app/forbidden could not be read: RBAC says no",
    );
  });

  test("one good reference among bad ones: used, Accepted, ResolvedRefs False", () => {
    const got = readBackendTLSPolicy(
      policy({ caCertificateRefs: [cm("missing"), cm("ca")], hostname: "a.example" }),
      sources,
    );
    expect(got.accepted).toEqual({ ok: true });
    expect(got.resolvedRefs).toMatchObject({ ok: false, reason: "InvalidCACertificateRef" });
    expect(got.tls?.caPem).toBe(ca);
  });

  test.each([
    [{ hostname: "a.example" }, "one of caCertificateRefs and wellKnownCACertificates must be set"],
    [
      { caCertificateRefs: [cm("ca")], wellKnownCACertificates: "System", hostname: "a.example" },
      "only one of",
    ],
    [{ wellKnownCACertificates: "Mine", hostname: "a.example" }, '"Mine" is not supported; only System is'],
    [{ wellKnownCACertificates: "System" }, "spec.validation.hostname is required"],
    [{ wellKnownCACertificates: "System", hostname: "*.example.com" }, "is not a precise DNS name"],
    [{ wellKnownCACertificates: "System", hostname: "A.example" }, "is not a precise DNS name"],
    [
      {
        wellKnownCACertificates: "System",
        hostname: "a.example",
        subjectAltNames: [{ type: "IP", hostname: "x" }],
      },
      'subjectAltNames[0].type "IP" is not Hostname or URI',
    ],
    [
      {
        wellKnownCACertificates: "System",
        hostname: "a.example",
        subjectAltNames: [{ type: "URI", uri: "a b" }],
      },
      'subjectAltNames[0].uri "a b" is not an absolute URI',
    ],
  ])("Invalid: %j", (validation, why) => {
    const got = readBackendTLSPolicy(policy(validation), sources);
    expect(got.tls).toBeUndefined();
    expect(got.accepted).toMatchObject({ ok: false, reason: "Invalid" });
    expect(got.accepted.ok ? "" : got.accepted.message).toContain(why);
  });

  test("no validation at all (the CRD requires it): Invalid, not refused at load", () => {
    const p = policy({});
    const got = readBackendTLSPolicy({ ...p, spec: { targetRefs: p.spec.targetRefs } }, sources);
    expect(got.accepted).toMatchObject({ ok: false, reason: "Invalid" });
    expect(got.accepted.ok ? "" : got.accepted.message).toContain("spec.validation.hostname is required");
  });

  test("an option is a requirement Gatehouse does not enforce: Invalid, never ignored", () => {
    const got = readBackendTLSPolicy(
      policy({ wellKnownCACertificates: "System", hostname: "a.example" }, { "example.com/min-tls": "1.3" }),
      sources,
    );
    expect(got.tls).toBeUndefined();
    expect(got.accepted).toMatchObject({ ok: false, reason: "Invalid" });
    expect(got.accepted.ok ? "" : got.accepted.message).toContain('spec.options "example.com/min-tls"');
  });
});
