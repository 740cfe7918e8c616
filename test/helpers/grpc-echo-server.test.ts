import { afterAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { type EchoResponse, grpcEcho, grpcEchoService, startGrpcEchoServer } from "./grpc-echo-server.ts";

function call(port: number, method: string, md: grpc.Metadata, authority?: string) {
  const { Client } = grpcEcho();
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    ...(authority ? { "grpc.default_authority": authority } : {}),
  });
  return new Promise<{ code: number; res?: EchoResponse }>((resolve) => {
    const fn = client[method] as NonNullable<(typeof client)[string]>;
    fn.call(client, {}, md, { deadline: Date.now() + 5000 }, (err, res) => {
      client.close();
      resolve({ code: err?.code ?? 0, ...(res ? { res } : {}) });
    });
  });
}

describe("gRPC echo (upstream echo-basic GRPC_ECHO_SERVER)", async () => {
  const server = await startGrpcEchoServer({ namespace: "ns", pod: "grpc-v1-local-0", service: "svc" });
  afterAll(() => server.stop());

  test("Echo answers the method, the authority, every metadata pair and the pod context", async () => {
    const md = new grpc.Metadata();
    md.set("Color", "orange");
    const { code, res } = await call(server.port, "Echo", md, "grpc.example.com");
    expect(code).toBe(0);
    const a = res?.assertions;
    expect(a?.fully_qualified_method).toBe(`/${grpcEchoService}/Echo`);
    expect(a?.authority).toBe("grpc.example.com");
    expect(a?.headers).toContainEqual({ key: ":authority", value: "grpc.example.com" });
    expect(a?.headers).toContainEqual({ key: "color", value: "orange" });
    expect(a?.context).toEqual({ namespace: "ns", ingress: "", service_name: "svc", pod: "grpc-v1-local-0" });
  });

  test("EchoTwo is a second method with the same answer", async () => {
    const { code, res } = await call(server.port, "EchoTwo", new grpc.Metadata());
    expect(code).toBe(0);
    expect(res?.assertions?.fully_qualified_method).toBe(`/${grpcEchoService}/EchoTwo`);
  });

  test("EchoThree is unimplemented: code 12", async () => {
    const { code } = await call(server.port, "EchoThree", new grpc.Metadata());
    expect(code).toBe(grpc.status.UNIMPLEMENTED);
    expect(server.calls).toBe(2);
  });
});
