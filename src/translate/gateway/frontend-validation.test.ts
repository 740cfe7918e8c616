import { describe, expect, test } from "bun:test";
import { testAuthority } from "../../proxy/testing/certs.ts";
import type { ConfigMap } from "../../sources/schema/core.ts";
import type { Gateway } from "../../sources/schema/gateway.ts";
import { caBundleProblem } from "../common/ca-bundle.ts";
import { frontendValidation, insecureFallbackFields } from "./frontend-validation.ts";

const ca = testAuthority("unit-ca");
const configMap = (name: string, data: Record<string, string>): ConfigMap =>
  ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns" }, data }) as ConfigMap;
const sources = {
  secrets: new Map(),
  configMaps: new Map([["ns/ca", configMap("ca", { "ca.crt": ca.certPem })]]),
  unreadable: [{ kind: "ConfigMap" as const, namespace: "ns", name: "forbidden", why: "403 Forbidden" }],
  grants: [],
};
const gateway = (validation: unknown, perPort: unknown[] = []): Gateway =>
  ({
    metadata: { name: "gw", namespace: "ns" },
    spec: { gatewayClassName: "c", listeners: [], tls: { frontend: { default: { validation }, perPort } } },
  }) as unknown as Gateway;
const ref = (name: string, kind = "ConfigMap") => ({ group: "", kind, name });

describe("frontendValidation", () => {
  test("a good ConfigMap: its CA, AllowValidOnly by default; perPort replaces default", () => {
    const gw = gateway({ caCertificateRefs: [ref("ca")] }, [{ port: 8443, tls: {} }]);
    expect(frontendValidation(gw, 443, sources)).toEqual({
      validation: { caPem: ca.certPem, mode: "AllowValidOnly" },
    });
    expect(frontendValidation(gw, 8443, sources)).toBeUndefined();
  });

  test("no valid CA refuses the listener; an unreadable ConfigMap says why", () => {
    const got = frontendValidation(gateway({ caCertificateRefs: [ref("forbidden")] }), 443, sources);
    expect(got?.validation).toBeUndefined();
    expect(got?.refusal?.reason).toBe("NoValidCACertificate");
    expect(got?.failure).toMatchObject({ reason: "InvalidCACertificateRef" });
    expect(got?.failure?.message).toContain("could not be read: 403 Forbidden");
  });

  test("one bad reference beside a good one: served with the good CA, the bad one reported", () => {
    const got = frontendValidation(
      gateway({ caCertificateRefs: [ref("web", "Service"), ref("ca")], mode: "AllowInsecureFallback" }),
      443,
      sources,
    );
    expect(got?.validation?.mode).toBe("AllowInsecureFallback");
    expect(got?.refusal).toBeUndefined();
    expect(got?.failure?.reason).toBe("InvalidCACertificateKind");
  });

  test("an unknown mode is refused, never taken as the lax one", () => {
    const got = frontendValidation(
      gateway({ caCertificateRefs: [ref("ca")], mode: "Whatever" }),
      443,
      sources,
    );
    expect(got?.refusal?.reason).toBe("UnsupportedValue");
    expect(got?.validation).toBeUndefined();
  });

  test("insecureFallbackFields names default and per-port entries", () => {
    const gw = gateway({ caCertificateRefs: [], mode: "AllowInsecureFallback" }, [
      { port: 9443, tls: { validation: { mode: "AllowInsecureFallback" } } },
      { port: 8443, tls: { validation: { mode: "AllowValidOnly" } } },
    ]);
    expect(insecureFallbackFields(gw)).toEqual(["default", "perPort 9443"]);
  });
});

describe("caBundleProblem", () => {
  test("PEM certificates pass; text, an empty bundle and a broken block do not", () => {
    expect(caBundleProblem(`${ca.certPem}\n${ca.certPem}`)).toBeUndefined();
    expect(caBundleProblem("not a certificate")).toBe("holds no PEM certificate");
    const broken = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    expect(caBundleProblem(`${ca.certPem}${broken}`)).toBe("certificate 2 does not parse");
  });
});
