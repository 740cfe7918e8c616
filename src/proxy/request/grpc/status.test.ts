import { describe, expect, test } from "bun:test";
import { errorResponse } from "../responses.ts";
import { asGrpcAnswer, grpcMessage, grpcStatusFor, isGrpcRequest } from "./status.ts";

const grpcCall = (type = "application/grpc") =>
  new Request("http://x/svc/Method", { method: "POST", headers: { "content-type": type } });

describe("gateway answers to gRPC calls", () => {
  test("which requests are gRPC calls (gRPC-Web is not: its status travels in the body)", () => {
    expect(isGrpcRequest(grpcCall())).toBe(true);
    expect(isGrpcRequest(grpcCall("application/grpc+proto"))).toBe(true);
    expect(isGrpcRequest(grpcCall("application/grpc; charset=utf-8"))).toBe(true);
    expect(isGrpcRequest(grpcCall("application/grpc-web"))).toBe(false);
    expect(isGrpcRequest(grpcCall("application/json"))).toBe(false);
    expect(isGrpcRequest(new Request("http://x/"))).toBe(false);
  });

  test("statuses: no endpoint UNAVAILABLE, timeout DEADLINE_EXCEEDED, no route UNIMPLEMENTED", () => {
    expect([503, 502, 504, 404, 500, 401, 403, 429, 418].map(grpcStatusFor)).toEqual([
      14, 14, 4, 12, 13, 16, 7, 8, 2,
    ]);
  });

  test("grpc-message is percent-encoded", () => {
    expect(grpcMessage("100% ok ✓")).toBe("100%25 ok %E2%9C%93");
  });

  test("a gateway error to a gRPC call: 200, Trailers-Only head, other fields kept", async () => {
    const err = errorResponse(503, "gatehouse");
    err.headers.set("x-filter", "kept");
    const res = asGrpcAnswer(grpcCall(), err);
    expect(res.status).toBe(200);
    expect(res.body).toBeNull();
    expect(Object.fromEntries(res.headers)).toEqual({
      "content-type": "application/grpc",
      "grpc-status": "14",
      "grpc-message": "gateway answered HTTP 503 Service Unavailable",
      server: "gatehouse",
      "x-filter": "kept",
    });
  });

  test("left alone: a success, a backend's answer, a request that is not gRPC", () => {
    const ok = errorResponse(200, "g");
    expect(asGrpcAnswer(grpcCall(), ok)).toBe(ok);
    const relayed = new Response("upstream", { status: 503 });
    expect(asGrpcAnswer(grpcCall(), relayed)).toBe(relayed);
    const plain = errorResponse(503, "g");
    expect(asGrpcAnswer(new Request("http://x/"), plain)).toBe(plain);
  });
});
