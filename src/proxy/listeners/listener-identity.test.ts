import { describe, expect, test } from "bun:test";
import type { ListenerTable } from "../table.ts";
import { selfSigned } from "../testing/certs.ts";
import { http2Refusal, identityOf, offersHttp2, sameShape, servesGrpc } from "./listener-identity.ts";

const a = selfSigned("a.example");
const b = selfSigned("b.example");
type Validation = { caPem: string; mode: "AllowValidOnly" | "AllowInsecureFallback" };
/** A catch-all virtual host with one route from an object of `kind`. */
const hostsWith = (kind?: string) => ({
  exact: new Map(),
  oneLabel: new Map(),
  anyLabels: new Map(),
  any: kind === undefined ? undefined : { hostname: "*", routes: [{ source: { kind } }] },
});
const https = (certs = [a], clientValidation?: Validation, routeKind?: string) =>
  ({
    protocol: "HTTPS",
    tls: { certificates: certs, ...(clientValidation ? { clientValidation } : {}) },
    hosts: hostsWith(routeKind),
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

  test("serving GRPCRoutes changes the shape: the server then offers h2 whatever --http2 says", () => {
    const grpc = https([a], undefined, "GRPCRoute");
    expect(servesGrpc(grpc)).toBe(true);
    expect(servesGrpc(https([a], undefined, "HTTPRoute"))).toBe(false);
    expect(sameShape(identityOf(grpc), identityOf(https([a], undefined, "HTTPRoute")))).toBe(false);
  });

  test("a plain listener serving GRPCRoutes: another server on --front bun only", () => {
    const plain = (kind: string) =>
      ({ protocol: "HTTP", hosts: hostsWith(kind) }) as unknown as ListenerTable;
    expect(identityOf(plain("GRPCRoute"), false, "bun")).not.toBe(
      identityOf(plain("HTTPRoute"), false, "bun"),
    );
    expect(identityOf(plain("GRPCRoute"), false, "raw")).toBe(identityOf(plain("HTTPRoute"), false, "raw"));
    expect(identityOf(plain("GRPCRoute"), false, "bun").split("\n")[0]).toBe("HTTP");
  });

  test("HTTP/2 over TLS: the flag, or GRPCRoutes; on --front bun not where client certificates are verified", () => {
    const mtls = { caPem: "ca", mode: "AllowValidOnly" as const };
    const grpc = https([a], undefined, "GRPCRoute");
    const grpcMtls = https([a], mtls, "GRPCRoute");
    const web = https([a], undefined, "HTTPRoute");
    expect([offersHttp2(grpc, false, "raw"), offersHttp2(grpc, false, "bun")]).toEqual([true, true]);
    expect([offersHttp2(web, false, "raw"), offersHttp2(web, true, "bun")]).toEqual([false, true]);
    expect([offersHttp2(grpcMtls, false, "raw"), offersHttp2(grpcMtls, false, "bun")]).toEqual([true, false]);
    expect(http2Refusal(grpcMtls, false, "bun")).toContain("get no HTTP/2");
    expect([http2Refusal(grpcMtls, false, "raw"), http2Refusal(web, false, "bun")]).toEqual([
      undefined,
      undefined,
    ]);
  });
});
