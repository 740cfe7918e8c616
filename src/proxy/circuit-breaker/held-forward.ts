/**
 * The full request path's side of the caps (`--front bun`, HTTP/2, and what the raw front relays): a
 * request is counted from before it is sent until the upstream's response body has been read to its end,
 * failed, or been cancelled (a client gone: Bun cancels the body it was sending), as the raw front counts
 * until its exchange ends (fast-exchange.ts). To see the body end its stream is passed through a pull
 * stream of ours, and Bun.serve sends any stream of ours chunked (measured, Bun 1.4): a Content-Length
 * response from a backend with a circuit breaker or a route with a client cap reaches the client chunked
 * on this path. A written exception (docs/traffic-policy.md); the bytes are the same.
 */
import type { LimitedLog } from "../../observability/log-limit.ts";
import type { RequestContext } from "../filters/filter-types.ts";
import { type BodyLimits, forward } from "../request/forward.ts";
import type { RequestObserver } from "../request/observer.ts";
import type { ChoiceLease, CompiledBackend, CompiledRoute } from "../table.ts";
import { OVERLOADED_HEADER } from "./breaker.ts";
import { endingStream } from "./ending-stream.ts";
import { admit, REFUSED, release } from "./hold.ts";

/** What `heldForward` answers when a cap refused the request (forward() answers it for a connection cap). */
export const OVERLOADED = 503;

/** forward(), counted in the backend's breaker and the route's client zone; OVERLOADED when one is full. */
export async function heldForward(
  client: string,
  ctx: RequestContext,
  backend: CompiledBackend,
  route: CompiledRoute,
  defaultTimeoutMs: number,
  log: LimitedLog,
  observer: RequestObserver | undefined,
  buffering: BodyLimits,
  lease: ChoiceLease | undefined,
): Promise<Awaited<ReturnType<typeof forward>> | typeof OVERLOADED> {
  const { breaker } = backend;
  const zone = route.clientZone;
  if (breaker === undefined && zone === undefined)
    return forward(ctx, backend, route, defaultTimeoutMs, log, observer, buffering, lease);
  const holds = admit(breaker, zone, client);
  if (holds === REFUSED) return OVERLOADED;
  let done = false;
  const end = () => {
    if (!done) release(holds, breaker, zone, client);
    done = true;
  };
  let out: Awaited<ReturnType<typeof forward>>;
  try {
    out = await forward(ctx, backend, route, defaultTimeoutMs, log, observer, buffering, lease);
  } catch (err) {
    end();
    throw err;
  }
  if (typeof out === "number" || out.body === null) {
    end();
    return out;
  }
  const held = new Response(endingStream(out.body, end), {
    status: out.status,
    statusText: out.statusText,
    headers: out.headers,
  });
  // Bun frames a stream of ours itself (chunked, or a length it counted): the upstream's must not stay.
  held.headers.delete("content-length");
  return held;
}

/** The 503 a cap answers, marked as Envoy marks its own (`x-envoy-overloaded`). */
export function overloadedHeaders(headers: Headers): Headers {
  headers.set(OVERLOADED_HEADER, "true");
  return headers;
}
