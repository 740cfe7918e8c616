/**
 * HTTPRoute `ExtensionRef` filters naming a `gatehouse.dev` HTTPRouteFilter in the route's namespace
 * (gateway-crds/httproutefilter.yaml, docs/gateway-api.md): what Gateway API has no field for, kept
 * the way the Ingress side of the route model already does it:
 * - `urlRewrite` with `path.type: ReplaceRegexMatch` (a regular expression on the whole path, its
 *   groups put in `substitution` as `$1`…`$9`: ingress-nginx's capture-group `rewrite-target`);
 * - `requestRedirect` with `stripTrailingSlash`, `includeDefaultPort`, a `ReplaceRegexMatch` path, or a
 *   whole `location` with nginx variables (`https://$host$request_uri`);
 * - `cors` with `behavior: IngressNginx` (ingress-nginx's `enable-cors`, model CORSFilter `style`);
 * - `responseRewrite`: the backend's Location/Refresh URLs and Set-Cookie domains and paths
 *   (ingress-nginx's `proxy-redirect-*`, `proxy-cookie-*`; model ResponseRewriteFilter);
 * - `urlRewrite.hostname` with a port (ingress-nginx's `upstream-vhost`).
 * The spec is judged here, not by the source, so a wrong field is reported on the route that uses the
 * filter (its rule is refused, UnsupportedValue) instead of the filter vanishing. A reference to another
 * kind or to a filter that does not exist resolves nothing: the rule answers 500 (never served without
 * the filter, as Gateway API requires) and the route's ResolvedRefs is False (InvalidKind,
 * BackendNotFound, as Envoy Gateway reports its own missing filters).
 */
import { z } from "zod";
import { fieldValueProblem } from "../../../model/http-syntax.ts";
import type {
  Filter,
  RedirectAction,
  ResponseRewriteFilter,
  ValueReplacement,
} from "../../../model/index.ts";
import { policyGroup } from "../../../sources/schema/groups.ts";
import { RouteReason } from "../../../status/reasons.ts";
import { redirectLocationProblem } from "../../common/redirect-location.ts";
import type { BackendContext, RefIssue } from "./backend-refs.ts";
import {
  corsFilter,
  type PathContext,
  type RuleInvalid,
  redirectAction,
  shown,
  urlRewrite,
} from "./filter-values.ts";

export const ROUTE_FILTER_KIND = "HTTPRouteFilter";

const text = z.string();
const pathModifier = z.strictObject({
  type: text,
  replaceFullPath: text.optional(),
  replacePrefixMatch: text.optional(),
  replaceRegexMatch: z.strictObject({ pattern: text, substitution: text }).optional(),
});
const replacement = z.strictObject({ from: text, to: text });
const spec = z.strictObject({
  urlRewrite: z.strictObject({ hostname: text.optional(), path: pathModifier.optional() }).optional(),
  requestRedirect: z
    .strictObject({
      scheme: text.optional(),
      hostname: text.optional(),
      port: z.int().optional(),
      statusCode: z.int().optional(),
      path: pathModifier.optional(),
      stripTrailingSlash: z.boolean().optional(),
      includeDefaultPort: z.boolean().optional(),
      location: text.optional(),
    })
    .optional(),
  cors: z
    .strictObject({
      allowOrigins: z.array(text).optional(),
      allowMethods: z.array(text).optional(),
      allowHeaders: z.array(text).optional(),
      exposeHeaders: z.array(text).optional(),
      allowCredentials: z.boolean().optional(),
      maxAge: z.int().min(0).optional(),
      behavior: z.enum(["GatewayAPI", "IngressNginx"]).optional(),
    })
    .optional(),
  responseRewrite: z
    .strictObject({
      location: replacement.optional(),
      cookieDomain: replacement.optional(),
      cookiePath: replacement.optional(),
    })
    .optional(),
});
type Spec = z.infer<typeof spec>;

export type ExtensionFilter =
  | { readonly name: string; readonly filter: Filter; readonly redirect?: undefined }
  | { readonly name: string; readonly redirect: RedirectAction }
  | { readonly issue: RefIssue };

/** The HTTPRouteFilter `ref` names, as a model filter or redirect; why not, or what the rule answers. */
export function extensionFilter(
  ref: unknown,
  field: string,
  ctx: BackendContext,
  at: PathContext,
): ExtensionFilter | RuleInvalid {
  const r = (ref ?? {}) as { group?: unknown; kind?: unknown; name?: unknown };
  if (typeof r.name !== "string" || r.name === "")
    return { reason: RouteReason.UnsupportedValue, message: `${field}: needs group, kind and name` };
  if (r.group !== policyGroup || r.kind !== ROUTE_FILTER_KIND) {
    const kind = `${typeof r.group === "string" && r.group !== "" ? `${r.group}/` : ""}${String(r.kind)}`;
    return {
      issue: {
        reason: RouteReason.InvalidKind,
        message: `${field}: ${kind} "${r.name}" is not a filter kind Gatehouse has (only ${policyGroup}/${ROUTE_FILTER_KIND}); the rule answers 500`,
      },
    };
  }
  const name = `${ROUTE_FILTER_KIND} ${ctx.namespace}/${r.name}`;
  const object = ctx.index.routeFilters.get(`${ctx.namespace}/${r.name}`);
  if (object === undefined)
    return {
      issue: {
        reason: RouteReason.BackendNotFound,
        message: `${field}: ${name} not found; the rule answers 500`,
      },
    };
  const invalid = (message: string): RuleInvalid => ({
    reason: RouteReason.UnsupportedValue,
    message: `${field}: ${name}: spec.${message}`,
  });
  const parsed = spec.safeParse(object.spec);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = (issue?.path ?? [])
      .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
      .join("");
    const why =
      issue?.code === "unrecognized_keys" ? `unknown field(s) ${issue.keys.join(", ")}` : issue?.message;
    return invalid(`${path.slice(1) || "(spec)"}: ${why}`.replace(/^spec\./, ""));
  }
  const s: Spec = parsed.data;
  const set = (["urlRewrite", "requestRedirect", "cors", "responseRewrite"] as const).filter(
    (k) => s[k] !== undefined,
  );
  if (set.length !== 1)
    return invalid(
      `must set exactly one of urlRewrite, requestRedirect, cors and responseRewrite (it sets ${set.length})`,
    );
  const here: PathContext = { ...at, extended: true };
  if (s.responseRewrite) {
    const f = responseRewrite(s.responseRewrite);
    return typeof f === "string" ? invalid(`responseRewrite.${f}`) : { name, filter: f };
  }
  if (s.urlRewrite) {
    const f = urlRewrite(s.urlRewrite, here);
    return typeof f === "string" ? invalid(`urlRewrite.${f}`) : { name, filter: f };
  }
  if (s.cors) {
    const { behavior, ...cors } = s.cors;
    const f = corsFilter(cors, behavior === "IngressNginx" ? "IngressNginx" : undefined);
    return typeof f === "string" ? invalid(`cors.${f}`) : { name, filter: f };
  }
  const { stripTrailingSlash, includeDefaultPort, location, ...core } = s.requestRedirect ?? {};
  if (location !== undefined) {
    const others = Object.keys(core).filter((k) => k !== "statusCode");
    if (others.length > 0 || stripTrailingSlash !== undefined || includeDefaultPort !== undefined)
      return invalid("requestRedirect.location is the whole Location: set only statusCode beside it");
    const problem = redirectLocationProblem(location.trim());
    if (problem) return invalid(`requestRedirect.location ${shown(location)} ${problem}`);
  }
  const action = redirectAction(core, here);
  if (typeof action === "string") return invalid(`requestRedirect.${action}`);
  return {
    name,
    redirect: {
      ...action,
      ...(location !== undefined ? { location: location.trim() } : {}),
      ...(stripTrailingSlash ? { stripTrailingSlash: true } : {}),
      ...(includeDefaultPort ? { writeDefaultPort: true } : {}),
    },
  };
}

/**
 * The values are sent in response headers, so each must be a field value; `from` must not be empty (it
 * would match every value). A cookie domain is compared without one leading dot, as nginx does.
 */
function responseRewrite(r: NonNullable<Spec["responseRewrite"]>): ResponseRewriteFilter | string {
  const out: { redirect?: ValueReplacement; cookieDomain?: ValueReplacement; cookiePath?: ValueReplacement } =
    {};
  for (const [key, field] of [
    ["location", "redirect"],
    ["cookieDomain", "cookieDomain"],
    ["cookiePath", "cookiePath"],
  ] as const) {
    const v = r[key];
    if (v === undefined) continue;
    const undot = (x: string) => (key === "cookieDomain" && x.startsWith(".") ? x.slice(1) : x);
    const from = undot(v.from);
    const to = undot(v.to);
    if (from === "") return `${key}.from must not be empty`;
    for (const [which, x] of [
      ["from", from],
      ["to", to],
    ] as const) {
      const problem = x === "" ? undefined : fieldValueProblem(x);
      if (problem) return `${key}.${which} ${shown(x)} ${problem}`;
    }
    out[field] = { from, to };
  }
  if (Object.keys(out).length === 0) return "sets none of location, cookieDomain and cookiePath";
  return { kind: "ResponseRewrite", ...out };
}
