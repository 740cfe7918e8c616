/**
 * Filters compiled to plain functions, split by phase. A route's chain (and, for forwards, each
 * backend's chain: route filters then backend filters) is built once at compile time. A filter the
 * compiler does not know makes the chain carry an `error`: the route then answers 500 and logs it,
 * because silently skipping a filter (say, an auth header edit) could be worse than failing.
 */
import type { Backend, Filter } from "../../model/index.ts";
import type { CompiledBackend } from "../table.ts";
import { compileCORS } from "./cors.ts";
import type { CompiledFilter, FilterChain, RequestFilter, ResponseFilter } from "./filter-types.ts";
import { compileRequestHeaderModifier } from "./request-header-modifier.ts";
import { compileRequestMirror } from "./request-mirror.ts";
import { compileResponseHeaderModifier } from "./response-header-modifier.ts";
import { compileResponseRewrite } from "./response-rewrite.ts";
import { compileURLRewrite } from "./url-rewrite.ts";

export const emptyChain: FilterChain = {
  request: [],
  response: [],
  error: undefined,
  kinds: [],
  mirrors: false,
  cors: false,
};

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
  const kinds = filters.map((f) => f.kind);
  return {
    request,
    response,
    error,
    kinds,
    mirrors: kinds.includes("RequestMirror"),
    cors: kinds.includes("CORS"),
  };
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
      return compileRequestMirror(f, backends, models, warn);
    case "CORS":
      return compileCORS(f);
    case "ResponseRewrite":
      return compileResponseRewrite(f);
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
    mirrors: a.mirrors || b.mirrors,
    cors: a.cors || b.cors,
  };
}

export function runResponseFilters(chain: FilterChain, req: Request, headers: Headers): void {
  for (const f of chain.response) f(req, headers);
}
