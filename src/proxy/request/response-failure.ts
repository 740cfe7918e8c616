/**
 * What Bun.serve's `error` hook answers. The request path catches its own errors (handler.ts, the
 * app's onError), so what reaches the hook is a response body that failed while Bun.serve was sending
 * it: on the fetch path, an upstream that closed before the body it announced was complete (Bun's
 * fetch errors the body stream, ECONNRESET). Bun calls the hook when that happens before it has begun
 * the head: that is a 502 (the upstream failed, as the raw front answers it), logged. When it happens
 * later, Bun cuts the connection, so the client sees the answer is incomplete, and prints the error to
 * stderr itself, past the logger: reading every body through a stream of ours to catch it cost about
 * 40 µs of CPU a request more (measured on a small proxied answer: two thirds more), so that print is a
 * written exception (docs/http.md).
 */
import { limitedLog } from "../../observability/log-limit.ts";
import { errorResponse } from "./responses.ts";

export function failedResponse(err: Error, listener: string, serverHeader: string): Response {
  if (fromFetch(err)) {
    limitedLog("warn", listener, "upstream closed before its response was complete", {
      listener,
      error: err.message,
    });
    return errorResponse(502, serverHeader);
  }
  const fields = { listener, error: err.message };
  limitedLog("error", listener, "unexpected error while serving a request", fields);
  return errorResponse(500, serverHeader);
}

/** Bun's fetch names the URL it failed on in `path`; nothing else the request path runs does. */
function fromFetch(err: Error): boolean {
  const path = (err as { path?: unknown }).path;
  return typeof path === "string" && (path.startsWith("http://") || path.startsWith("https://"));
}
