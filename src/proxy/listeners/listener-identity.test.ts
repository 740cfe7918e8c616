import { describe, expect, test } from "bun:test";
import type { ListenerTable } from "../table.ts";
import { selfSigned } from "../testing/certs.ts";
import { identityOf, sameShape } from "./listener-identity.ts";

const a = selfSigned("a.example");
const b = selfSigned("b.example");
type Validation = { caPem: string; mode: "AllowValidOnly" | "AllowInsecureFallback" };
const https = (certs = [a], clientValidation?: Validation) =>
  ({
    protocol: "HTTPS",
    tls: { certificates: certs, ...(clientValidation ? { clientValidation } : {}) },
  }) as unknown as ListenerTable;

describe("listener identity", () => {
  test("equal listeners are equal; certificates alone keep the shape", () => {
    expect(identityOf(https())).toBe(identityOf(https()));
    const rotated = identityOf(https([b]));
    expect(rotated).not.toBe(identityOf(https()));
    expect(sameShape(rotated, identityOf(https()))).toBe(true);
  });

  test("client validation, sharing the port and the protocol change the shape", () => {
    const base = identityOf(https());
    expect(sameShape(identityOf(https([a], { caPem: "ca", mode: "AllowValidOnly" })), base)).toBe(false);
    expect(sameShape(identityOf(https(), true), base)).toBe(false);
    expect(sameShape(identityOf({ protocol: "HTTP" } as ListenerTable), base)).toBe(false);
  });

  test("a new client CA bundle keeps the shape (rotated in place); a new mode does not", () => {
    const strict = identityOf(https([a], { caPem: "ca1", mode: "AllowValidOnly" }));
    const rotated = identityOf(https([a], { caPem: "ca2", mode: "AllowValidOnly" }));
    expect(rotated).not.toBe(strict);
    expect(sameShape(rotated, strict)).toBe(true);
    const fallback = identityOf(https([a], { caPem: "ca1", mode: "AllowInsecureFallback" }));
    expect(sameShape(fallback, strict)).toBe(false);
  });
});
