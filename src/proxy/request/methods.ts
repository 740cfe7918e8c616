/**
 * Methods refused after routing, the same way on both fronts. TRACE makes a server echo the request back,
 * credentials included (cross-site tracing), and nginx answers it 405: so do we, unless the route matched
 * names TRACE itself (an HTTPRoute may match it: then it was asked for).
 */
import type { CompiledRoute } from "../table.ts";

export function refusedMethod(method: string, route: CompiledRoute): boolean {
  return method === "TRACE" && route.method !== "TRACE";
}
