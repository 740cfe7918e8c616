/**
 * gRPC clients read a call's outcome from `grpc-status` (and `grpc-message`), not from the HTTP status:
 * an HTTP error without them becomes whatever the client library guesses (grpc-js: 503 → UNAVAILABLE,
 * 504 → UNAVAILABLE too, 404 → UNIMPLEMENTED, with the bare "Received HTTP status code" as message). So
 * an answer the gateway makes itself (no route, no endpoint, a timeout, a guard's refusal) to a gRPC
 * request is sent as gRPC servers send errors: HTTP 200, `content-type: application/grpc`, and the status
 * in the head of a response that ends there ("Trailers-Only", gRPC over HTTP/2). Answers from backends
 * are relayed as they are.
 */
import { madeByGateway, STATUS_TEXT } from "../responses.ts";

/** gRPC status codes the gateway sends (grpc/doc/statuscodes.md). */
export const GrpcStatus = {
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** A gRPC call: `application/grpc` or `application/grpc+<codec>` (gRPC-Web, which has no trailers, is not). */
export function isGrpcRequest(req: Request): boolean {
  return isGrpcContentType(req.headers.get("content-type"));
}

/** `isGrpcRequest` by the request's Content-Type alone (the raw front has no Request). */
export function isGrpcContentType(type: string | null): boolean {
  if (type === null || !type.startsWith("application/grpc")) return false;
  const next = type.charCodeAt(16);
  return Number.isNaN(next) || next === 43 /* + */ || next === 59 /* ; */;
}

/**
 * The gRPC status for a gateway answer: grpc/doc/http-grpc-status-mapping.md, but for 504 (the backend
 * did not answer in time), which is DEADLINE_EXCEEDED as the call's deadline would have said, 500 (the
 * gateway's own failure), INTERNAL, and 429 (a rate limit), RESOURCE_EXHAUSTED.
 */
export function grpcStatusFor(httpStatus: number): number {
  switch (httpStatus) {
    case 400:
    case 500:
      return GrpcStatus.INTERNAL;
    case 401:
      return GrpcStatus.UNAUTHENTICATED;
    case 403:
      return GrpcStatus.PERMISSION_DENIED;
    case 404:
      return GrpcStatus.UNIMPLEMENTED;
    case 429:
      return GrpcStatus.RESOURCE_EXHAUSTED;
    case 502:
    case 503:
      return GrpcStatus.UNAVAILABLE;
    case 504:
      return GrpcStatus.DEADLINE_EXCEEDED;
    default:
      return GrpcStatus.UNKNOWN;
  }
}

/** `grpc-message` is percent-encoded: bytes outside printable ASCII, and `%` itself (gRPC over HTTP/2). */
export function grpcMessage(text: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(text)) {
    out +=
      byte < 0x20 || byte > 0x7e || byte === 0x25
        ? `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
        : String.fromCharCode(byte);
  }
  return out;
}

/**
 * `res` as a gRPC client needs it when the gateway made it for a gRPC request and it is not a success;
 * otherwise `res` itself. The head's other fields (Server, a filter's additions) are kept.
 */
export function asGrpcAnswer(req: Request, res: Response): Response {
  if (res.status < 400 || !madeByGateway(res) || !isGrpcRequest(req)) return res;
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  headers.set("content-type", "application/grpc");
  headers.set("grpc-status", String(grpcStatusFor(res.status)));
  headers.set(
    "grpc-message",
    grpcMessage(`gateway answered HTTP ${res.status} ${STATUS_TEXT[res.status]?.trim() ?? ""}`.trim()),
  );
  void res.body?.cancel().catch(() => {});
  return new Response(null, { status: 200, headers });
}
