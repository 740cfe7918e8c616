/**
 * Gateway API RequestMirror: a fire-and-forget copy of the request (as edited by the filters before
 * it) to one endpoint of another backend; its answer is read and dropped. It never delays or fails the
 * main request. Requests with a body are not mirrored: teeing a stream would buffer it without bound
 * whenever the mirror is slower than the real upstream.
 */
import type { Backend, RequestMirrorFilter } from "../../model/index.ts";
import { logger } from "../../observability/logger.ts";
import { type CompiledBackend, nextEndpoint } from "../table.ts";
import type { CompiledFilter } from "./filter-types.ts";

const log = logger.child({ component: "proxy", filter: "RequestMirror" });

export function compileRequestMirror(
  f: RequestMirrorFilter,
  backend: CompiledBackend | undefined,
  model: Backend | undefined,
  warn: (msg: string) => void,
): CompiledFilter {
  if (backend === undefined || model === undefined) {
    warn(`RequestMirror names unknown backend ${f.backendId}; nothing is mirrored`);
    return {};
  }
  const share = Math.max(0, Math.min(100, f.percent)) / 100;
  return {
    request: (ctx) => {
      if (share === 0 || (share < 1 && Math.random() >= share)) return undefined;
      if (ctx.req.body !== null || backend.bases.length === 0) return undefined;
      const headers = new Headers(ctx.headers);
      if (ctx.host !== null) headers.set("host", ctx.host);
      const url = nextEndpoint(backend) + ctx.path + ctx.query;
      fetch(url, {
        method: ctx.req.method,
        headers,
        redirect: "manual",
        decompress: false,
        proxy: false,
        signal: AbortSignal.timeout(ctx.timeoutMs),
      }).then(
        (res) => res.body?.cancel().catch(() => {}),
        (err: unknown) => log.debug("mirror request failed", { backend: f.backendId, error: String(err) }),
      );
      return undefined;
    },
  };
}
