/** Small plain-text answers the gateway makes itself (errors, direct responses). */
import { ownErrorBody } from "../error-pages/own-bodies.ts";

/** The media type of the plain-text answers the gateway writes itself. */
export const PLAIN_TEXT = "text/plain; charset=utf-8";

/** Every answer made here, so that a gRPC client gets it as a gRPC status (grpc/status.ts). */
const made = new WeakSet<Response>();

export function textResponse(
  status: number,
  body: string,
  serverHeader: string,
  contentType = PLAIN_TEXT,
): Response {
  const res = new Response(body, { status, headers: { "content-type": contentType, server: serverHeader } });
  made.add(res);
  return res;
}

/** Whether the gateway made `res` itself (textResponse, errorResponse), rather than relaying a backend's. */
export function madeByGateway(res: Response): boolean {
  return made.has(res);
}

export const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "Bad Request\n",
  404: "Not Found\n",
  405: "Method Not Allowed\n",
  408: "Request Timeout\n",
  413: "Content Too Large\n",
  414: "URI Too Long\n",
  431: "Request Header Fields Too Large\n",
  500: "Internal Server Error\n",
  502: "Bad Gateway\n",
  503: "Service Unavailable\n",
  504: "Gateway Timeout\n",
};

/** The gateway's own error: the operator's body for `status` when one is configured, else plain text. */
export function errorResponse(status: number, serverHeader: string): Response {
  const own = ownErrorBody(status);
  if (own !== undefined) return textResponse(status, own.text, serverHeader, own.contentType);
  return textResponse(status, STATUS_TEXT[status] ?? "\n", serverHeader);
}
