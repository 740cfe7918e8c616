/**
 * Error pages on the request path (model/error-pages.ts): a response with one of the route's codes,
 * made by the gateway or (unless `upstream` is off) by the backend, is replaced by the error backend's
 * answer to a request made as ingress-nginx's `@custom_…` location makes it. That answer is passed on as
 * it comes, status included; an error backend that cannot be reached, times out or answers nothing
 * leaves the gateway's own error for the code. The route's response is read no further once replaced.
 */
import { logger } from "../../observability/logger.ts";
import { prepareClientResponse } from "../request/forward.ts";
import { isSaneRequestId, newRequestId } from "../request/forwarded-headers.ts";
import { errorResponse, madeByGateway } from "../request/responses.ts";
import { type CompiledErrorPages, nextEndpoint } from "../table.ts";

const log = logger.child({ component: "proxy" });

/** `res`, or what replaces it. `originalUri`: the request's path and query as received. */
export async function withErrorPage(
  pages: CompiledErrorPages,
  req: Request,
  originalUri: string,
  res: Response | Promise<Response>,
  serverHeader: string,
  timeoutMs: number,
): Promise<Response> {
  const got = await res;
  const status = got.status;
  if (!pages.codes.has(status)) return got;
  const made = madeByGateway(got);
  if (!made && !pages.upstream) return got;
  const page = await askErrorBackend(pages, req, status, originalUri, timeoutMs);
  if (!made) got.body?.cancel().catch(() => {});
  if (page !== undefined) return prepareClientResponse(page, serverHeader);
  return made ? got : errorResponse(status, serverHeader);
}

async function askErrorBackend(
  pages: CompiledErrorPages,
  req: Request,
  code: number,
  originalUri: string,
  timeoutMs: number,
): Promise<Response | undefined> {
  const backend = pages.backend;
  if (backend === undefined || backend.bases.length === 0) return undefined;
  const base = nextEndpoint(backend);
  const id = req.headers.get("x-request-id");
  const headers = new Headers([
    ["host", req.headers.get("host") ?? ""],
    ["x-code", String(code)],
    ["x-format", req.headers.get("accept") ?? ""],
    ["x-original-uri", originalUri],
    ["x-request-id", id !== null && isSaneRequestId(id) ? id : newRequestId()],
  ]);
  for (const [name, value] of pages.fields) headers.set(name, value);
  try {
    return await fetch(`${base}/`, {
      method: req.method,
      headers,
      redirect: "manual",
      decompress: false,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    log.debug("error backend did not answer; the gateway's own error is sent", {
      backend: backend.id,
      code,
      error: String(err),
    });
    return undefined;
  }
}

/** The path and query of Bun's `req.url` (absolute when the Host is valid, else a bare path). */
export function originalUri(url: string): string {
  if (url.charCodeAt(0) === 47) return url;
  const scheme = url.indexOf("://");
  const start = scheme < 0 ? -1 : url.indexOf("/", scheme + 3);
  return start < 0 ? "/" : url.slice(start);
}
