/**
 * The request head limits on `--front bun`, answered as the raw front's parser answers them
 * (raw-front/http1/request-head.ts): a head over `bytes` is 431, a request line over MAX_REQUEST_LINE
 * 414, more than `fields` field lines 431. Bun.serve enforces the size itself, with the process's
 * node:http `maxHeaderSize` (read per request, measured on Bun 1.4; counted as the raw front counts:
 * request line to blank line), so that is set; the line and the count are checked here before the app.
 * Bun's Headers joins repeated fields of one name, so here they count once (a written exception,
 * docs/http.md), and Bun.serve refuses more than MAX_REQUEST_HEADER_FIELDS lines whatever it is told.
 */
import http from "node:http";
import { MAX_REQUEST_LINE, type RequestHeadLimits } from "../../model/http-syntax.ts";
import { errorResponse } from "../request/responses.ts";

/** Sets Bun.serve's head size limit (process-wide: every Bun.serve of the process shares it). */
export function setBunHeadLimit(limits: RequestHeadLimits): void {
  // node:http's typings mark it read-only; Bun reads the value when it parses a head.
  (http as { maxHeaderSize: number }).maxHeaderSize = limits.bytes;
}

/** The answer for a head past the limits Bun.serve does not enforce itself, or undefined. */
export function headRefusal(
  req: Request,
  limits: RequestHeadLimits,
  serverHeader: string,
): Response | undefined {
  if (requestLineLength(req) > MAX_REQUEST_LINE) return errorResponse(414, serverHeader);
  if (req.headers.count > limits.fields) return errorResponse(431, serverHeader);
  return undefined;
}

/** `METHOD SP target SP HTTP/1.1`, the target as Bun gives it (origin-form: Bun drops an absolute one's). */
function requestLineLength(req: Request): number {
  const url = req.url;
  let start = 0;
  if (url.charCodeAt(0) !== 47) {
    const scheme = url.indexOf("://");
    start = scheme < 0 ? 0 : url.indexOf("/", scheme + 3);
    if (start < 0) start = url.length - 1;
  }
  return req.method.length + 1 + (url.length - start) + 9;
}
