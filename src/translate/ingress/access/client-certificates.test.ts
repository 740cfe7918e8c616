import { expect, test } from "bun:test";
import { testAuthority } from "../../../proxy/testing/certs.ts";
import type { Secret } from "../../../sources/schema/core.ts";
import { readClientCertificate } from "./client-certificates.ts";

const ca = testAuthority("translate-clients");
const secret = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "ca", namespace: "ns" },
  data: { "ca.crt": Buffer.from(ca.certPem).toString("base64") },
} as unknown as Secret;
const sources = { secrets: new Map([["ns/ca", secret]]), unreadable: [] };

/** The demand for `annotations` (without prefix) and the annotations reported. */
function read(annotations: Record<string, string>) {
  const reported: string[] = [];
  const r = {
    raw: (name: string) => annotations[name],
    bad: (name: string, _value: string, why: string) => {
      reported.push(`${name}: ${why}`);
      return undefined;
    },
  };
  const got = readClientCertificate(r, "ns", sources);
  return { demand: got?.demand, reported };
}

test("match-cn with verification off or without a CA: applied as nginx does, and reported", () => {
  const cn = { "auth-tls-secret": "ns/ca", "auth-tls-match-cn": "CN=alice" };
  const off = read({ ...cn, "auth-tls-verify-client": "off" });
  expect(off.demand).toMatchObject({ verify: "off", matchCN: "CN=alice" });
  expect(off.reported).toEqual([expect.stringContaining("the subject is empty")]);
  const noCA = read({ ...cn, "auth-tls-verify-client": "optional_no_ca" });
  expect(noCA.demand).toMatchObject({ verify: "optional_no_ca", matchCN: "CN=alice" });
  expect(noCA.reported).toEqual([expect.stringContaining("self-signed")]);
  expect(read({ ...cn, "auth-tls-verify-client": "optional" }).reported).toEqual([]);
  expect(read(cn).reported).toEqual([]);
});
