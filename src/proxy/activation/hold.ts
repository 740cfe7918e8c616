/**
 * The request path's side of activation (handler.ts, both fronts: the raw front relays a request for a
 * backend with activation to the same handler, raw-front/plan.ts). A backend with endpoints goes on at
 * once; one asleep holds the request in its activator's queue while it wakes. A body is never buffered
 * past the policy's cap: a declared length above it is refused before anything is held, a chunked body
 * is read while the request waits and refused once it passes the cap.
 */
import type { RequestContext } from "../filters/filter-types.ts";
import { errorResponse } from "../request/responses.ts";
import type { CompiledBackend } from "../table.ts";
import type { BackendActivator, HoldRefusal } from "./activator.ts";

/** Why a held request gets 503, and the Retry-After it carries (none for a wake that cannot succeed). */
export interface HoldAnswer {
  readonly reason: HoldRefusal | "body";
  readonly retryAfterS: number | undefined;
}

/** The backend to forward to once it has endpoints, or why the request gets 503. */
export async function awakeBackend(
  backend: CompiledBackend,
  activator: BackendActivator,
  ctx: RequestContext,
): Promise<CompiledBackend | HoldAnswer> {
  if (backend.bases.length > 0) return backend;
  const cap = activator.config.maxHeldBodyBytes;
  const retryAfterS = Math.max(1, Math.ceil(activator.config.maxHoldMs / 1000));
  const req = ctx.req;
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > cap) return { reason: "body", retryAfterS };
  const streamed =
    declared === null && req.body !== null && ctx.body === undefined && ctx.bodyStream === undefined;
  const body = streamed
    ? readCapped(req.body as ReadableStream<Uint8Array>, cap, activator.config.maxHoldMs)
    : undefined;
  // A client that leaves, or a body refused, frees its place in the queue at once.
  const gone = new AbortController();
  const held = activator.hold(AbortSignal.any([req.signal, gone.signal]));
  if (body !== undefined) {
    const read = await body;
    if (read === undefined) {
      gone.abort();
      return { reason: "body", retryAfterS };
    }
    // What forward() sends instead of the request's own (now read) stream.
    (ctx as { body: Uint8Array | undefined }).body = read;
  }
  const outcome = await held;
  if (typeof outcome === "string")
    return { reason: outcome, retryAfterS: outcome === "refused" ? undefined : retryAfterS };
  return wokenBackend(backend, outcome);
}

/** 503 for a request that was not released, with Retry-After when trying later may help. */
export function notWokenResponse(answer: HoldAnswer, serverHeader: string): Response {
  const res = errorResponse(503, serverHeader);
  if (answer.retryAfterS !== undefined) res.headers.set("retry-after", String(answer.retryAfterS));
  return res;
}

/** One woken copy per endpoint list, so the round robin is shared by every request it serves. */
const woken = new WeakMap<readonly string[], CompiledBackend>();

function wokenBackend(backend: CompiledBackend, bases: readonly string[]): CompiledBackend {
  let b = woken.get(bases);
  if (b === undefined) {
    b = { ...backend, bases, problem: undefined, health: undefined, next: 0 };
    woken.set(bases, b);
  }
  return b;
}

/**
 * The whole body when it stays within `cap` bytes and arrives within `ms` (the hold time: a client that
 * trickles cannot keep a request held longer); undefined otherwise, or when the client goes.
 */
async function readCapped(
  stream: ReadableStream<Uint8Array>,
  cap: number,
  ms: number,
): Promise<Uint8Array | undefined> {
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  const deadline = performance.now() + ms;
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), Math.max(0, deadline - performance.now()));
      });
      const r = await Promise.race([reader.read(), late]).finally(() => clearTimeout(timer));
      if (r === "late") {
        reader.cancel("held request body too slow").catch(() => {});
        return undefined;
      }
      if (r.done) break;
      size += r.value.length;
      if (size > cap) {
        reader.cancel("held request body over the cap").catch(() => {});
        return undefined;
      }
      parts.push(r.value);
    }
  } catch {
    return undefined;
  }
  return parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts, size);
}
