import type { HTTPRouteMatch } from "../../../sources/schema/gateway.ts";
import type { GRPCRouteMatch } from "../../../sources/schema/grpcroute.ts";
import { regexProblem } from "../regex-safety.ts";

/** What ranks a GRPCRoute match against another: the characters of its service and of its method. */
export interface GRPCMethodOrder {
  readonly service: number;
  readonly method: number;
}

/** The CRD's patterns for an Exact service and method (GRPCMethodMatch CEL rules, v1.6.1). */
const exactService = /^\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$/i;
const exactMethod = /^[A-Za-z_][A-Za-z_0-9]*$/;

/**
 * A GRPCRoute match as the HTTPRoute match it is on the wire: a gRPC call is a POST to
 * `/<service>/<method>` (gRPC over HTTP/2, "Requests"), so the method match becomes a path match and the
 * header matches stay as they are.
 * - Exact service and method: the Exact path `/<service>/<method>`;
 * - Exact service alone: PathPrefix `/<service>` (every method of it);
 * - Exact method alone: RegularExpression `/[^/]+/<method>` (that method of any service);
 * - RegularExpression: `/(?:<service>)/(?:<method>)`, an absent side being `[^/]+` (anchored, as every
 *   path pattern is; RE2-compatible syntax, checked like HTTPRoute patterns).
 * No method match: PathPrefix `/`. Returns why the match is invalid (starting with its field) otherwise.
 */
export function grpcMatchAsHTTP(
  m: GRPCRouteMatch,
): { readonly match: HTTPRouteMatch; readonly order: GRPCMethodOrder } | string {
  const headers = m.headers !== undefined ? { headers: m.headers } : {};
  const mm = m.method;
  if (mm === undefined)
    return {
      match: { path: { type: "PathPrefix", value: "/" }, ...headers },
      order: { service: 0, method: 0 },
    };
  const type = mm.type ?? "Exact";
  const service = mm.service ?? "";
  const method = mm.method ?? "";
  const order = { service: service.length, method: method.length };
  if (service === "" && method === "") return "method: one or both of service and method must be set";
  if (type === "Exact") {
    if (service !== "" && !exactService.test(service))
      return `method.service "${service}" must match ${exactService.source}`;
    if (method !== "" && !exactMethod.test(method))
      return `method.method "${method}" must match ${exactMethod.source}`;
    const path =
      service === ""
        ? { type: "RegularExpression", value: `/[^/]+/${method}` }
        : method === ""
          ? { type: "PathPrefix", value: `/${service}` }
          : { type: "Exact", value: `/${service}/${method}` };
    return { match: { path, ...headers }, order };
  }
  if (type !== "RegularExpression") return `method.type "${type}" is not Exact or RegularExpression`;
  for (const [field, value] of [
    ["service", service],
    ["method", method],
  ] as const) {
    const problem = value === "" ? undefined : regexProblem(value);
    if (problem) return `method.${field} "${value}" ${problem}`;
  }
  const part = (v: string) => (v === "" ? "[^/]+" : `(?:${v})`);
  const value = `/${part(service)}/${part(method)}`;
  return { match: { path: { type: "RegularExpression", value }, ...headers }, order };
}
