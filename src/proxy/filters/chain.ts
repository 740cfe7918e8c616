/**
 * Filters compiled to plain functions, split by phase. A route's chain (and, for forwards, each
 * backend's chain: route filters then backend filters) is built once at compile time. A filter the
 * compiler does not know makes the chain carry an `error`: the route then answers 500 and logs it,
 * because silently skipping a filter (say, an auth header edit) could be worse than failing.
 */
import type { Backend, Filter } from "../../model/types.ts";
import type { CompiledBackend } from "../table.ts";
import { compileCORS } from "./cors.ts";
import { compileRequestHeaderModifier } from "./request-header-modifier.ts";
import { compileRequestMirror } from "./request-mirror.ts";
import { compileResponseHeaderModifier } from "./response-header-modifier.ts";
import { compileURLRewrite } from "./url-rewrite.ts";

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
}

export const emptyChain: FilterChain = { request: [], response: [], error: undefined, kinds: [] };

/** What a single filter compiles to; either phase may be absent. */
export interface CompiledFilter {
  readonly request?: RequestFilter;
  readonly response?: ResponseFilter;
}

/**
 * @param warn receives compile-time problems (unknown mirror backend, unknown filter kind).
 */
export function compileFilterChain(
  filters: readonly Filter[],
  backends: ReadonlyMap<string, CompiledBackend>,
  models: Readonly<Record<string, Backend>>,
  warn: (msg: string) => void,
): FilterChain {
  if (filters.length === 0) return emptyChain;
  const request: RequestFilter[] = [];
  const response: ResponseFilter[] = [];
  let error: string | undefined;
  for (const f of filters) {
    const c = compileFilter(f, backends, models, warn);
    if (c === undefined) {
      error = `unsupported filter kind ${JSON.stringify((f as { kind?: unknown }).kind)}`;
      continue;
    }
    if (c.request) request.push(c.request);
    if (c.response) response.push(c.response);
  }
  return { request, response, error, kinds: filters.map((f) => f.kind) };
}

function compileFilter(
  f: Filter,
  backends: ReadonlyMap<string, CompiledBackend>,
  models: Readonly<Record<string, Backend>>,
  warn: (msg: string) => void,
): CompiledFilter | undefined {
  switch (f.kind) {
    case "RequestHeaderModifier":
      return compileRequestHeaderModifier(f);
    case "ResponseHeaderModifier":
      return compileResponseHeaderModifier(f);
    case "URLRewrite":
      return compileURLRewrite(f);
    case "RequestMirror":
      return compileRequestMirror(f, backends.get(f.backendId), models[f.backendId], warn);
    case "CORS":
      return compileCORS(f);
    default:
      return undefined;
  }
}

/** Concatenation of two chains (route filters, then a backend's). */
export function joinChains(a: FilterChain, b: FilterChain): FilterChain {
  if (b === emptyChain) return a;
  if (a === emptyChain) return b;
  return {
    request: [...a.request, ...b.request],
    response: [...a.response, ...b.response],
    error: a.error ?? b.error,
    kinds: [...a.kinds, ...b.kinds],
  };
}

export function runResponseFilters(chain: FilterChain, req: Request, headers: Headers): void {
  for (const f of chain.response) f(req, headers);
}
