/**
 * What compiled filters are: the types the route table, the request paths and each filter share.
 * Kept apart from chain.ts, which builds chains from every filter kind, so that a filter and the
 * table can name these types without importing the chain builder (and it them).
 */
import type { Filter } from "../../model/index.ts";
import type { RequestTrace } from "../../observability/tracing/trace-context.ts";
import type { RequestObserver } from "../request/observer.ts";

/** What request filters read and change; one per forwarded request. */
export interface RequestContext {
  readonly req: Request;
  /** Headers going upstream: the client's, already stripped of hop-by-hop ones, edited in place. */
  readonly headers: Headers;
  /** Path going upstream. */
  path: string;
  /** `""` or `?…`, sent unchanged. */
  readonly query: string;
  /** Host header going upstream (the client's unless rewritten); null when the client sent none. */
  host: string | null;
  /** The route's matched prefix without trailing slash, for ReplacePrefixMatch. */
  readonly prefix: string;
  /** Time limit for side requests (mirrors). */
  readonly timeoutMs: number;
  /** Base URL of the endpoint the request was last sent to; "" until forwarded. */
  upstream: string;
  /**
   * The body, read whole before the filters ran (chains with a RequestMirror only, and only a body
   * forward() reads whole: request/forward.ts `readsWhole`); undefined: none, or streamed.
   */
  readonly body: Uint8Array | undefined;
  /**
   * The body as a stream when the route's WAF read its first bytes and the rest is still coming
   * (waf/request-check.ts): forward() sends it instead of `req.body`, which is then locked.
   */
  readonly bodyStream?: ReadableStream<Uint8Array>;
  /** Told what became of mirrored copies (request-mirror.ts); undefined on paths without mirrors. */
  readonly observer: RequestObserver | undefined;
  /** The request's trace (tracing on): forward() counts its attempts there. */
  readonly trace?: RequestTrace | undefined;
}

/** Returns a Response to answer immediately (e.g. a CORS preflight), or undefined to go on. */
export type RequestFilter = (ctx: RequestContext) => Response | undefined;
/** Edits the headers of the response about to be sent to the client. */
export type ResponseFilter = (req: Request, headers: Headers) => void;

export interface FilterChain {
  readonly request: readonly RequestFilter[];
  readonly response: readonly ResponseFilter[];
  /** Why this chain cannot run; the route answers 500. */
  readonly error: string | undefined;
  /** The model filter kinds in this chain, in order (the raw-socket front picks its path by them). */
  readonly kinds: readonly Filter["kind"][];
  /** A RequestMirror is among `kinds`: the Bun front then reads a body it would read whole first. */
  readonly mirrors: boolean;
  /** A CORS filter is among `kinds` (the raw front answers its preflights and passes it the request). */
  readonly cors: boolean;
}

/** What a single filter compiles to; either phase may be absent. */
export interface CompiledFilter {
  readonly request?: RequestFilter;
  readonly response?: ResponseFilter;
}
