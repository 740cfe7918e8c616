/**
 * An AuthPolicy's `spec.externalAuth` as the model's `ExternalAuth` (forward authentication; semantics in
 * docs/auth.md and src/auth/forward-auth.ts), judged as ingress-nginx's `auth-*` annotations are
 * (ingress/access/external-auth.ts): the same templates, header names and cache durations. Unlike an
 * annotation, every value that cannot be used as written makes the policy Invalid (its routes answer
 * 401): a policy is one object, written for Gatehouse.
 */
import type { ExternalAuth } from "../../model/index.ts";
import {
  AUTH_CACHE_FAMILIES,
  AUTH_CACHE_VARIABLES,
  AUTH_VARIABLES,
  parseLocationTemplate,
} from "../../model/location-template.ts";
import {
  cacheDurations,
  EXTERNAL_AUTH_TIMEOUT_MS,
  forbiddenResponseHeader,
  templateProblem,
} from "../ingress/access/external-auth.ts";
import type { AuthPolicySpec } from "./auth-policy-spec.ts";

export function policyExternalAuth(spec: AuthPolicySpec, errors: string[]): ExternalAuth | undefined {
  const e = spec.externalAuth;
  if (e === undefined) return undefined;
  const field = "spec.externalAuth";
  const check = (text: string | undefined, name: string, url: boolean) => {
    const why = text === undefined ? undefined : templateProblem(text, AUTH_VARIABLES, url);
    if (why !== undefined) errors.push(`${field}.${name} ${JSON.stringify(text?.slice(0, 120))}: ${why}`);
  };
  check(e.url, "url", true);
  check(e.signinURL, "signinURL", true);
  check(e.requestRedirect, "requestRedirect", false);
  const responseHeaders: string[] = [];
  for (const [i, name] of (e.responseHeaders ?? []).entries()) {
    const lower = name.toLowerCase();
    if (forbiddenResponseHeader(lower))
      errors.push(
        `${field}.responseHeaders[${i}] "${name}": frames or steers the connection; cannot be copied`,
      );
    else if (!responseHeaders.includes(lower)) responseHeaders.push(lower);
  }
  let cache: ExternalAuth["cache"];
  if (e.cache !== undefined) {
    const key = parseLocationTemplate(e.cache.key, AUTH_CACHE_VARIABLES, AUTH_CACHE_FAMILIES);
    if (!key.ok) errors.push(`${field}.cache.key: ${key.message}`);
    const seconds = cacheDurations(e.cache.durations ?? "200 202 401 5m");
    if (seconds === undefined)
      errors.push(
        `${field}.cache.durations "${e.cache.durations}": not "<status>… <time>[, …]" (e.g. "200 202 401 5m")`,
      );
    cache = { key: e.cache.key, seconds: seconds ?? {} };
  }
  return {
    url: e.url,
    ...(e.method !== undefined ? { method: e.method } : {}),
    ...(e.signinURL !== undefined ? { signinURL: e.signinURL } : {}),
    signinRedirectParam: e.signinRedirectParam ?? "rd",
    responseHeaders,
    ...(e.requestRedirect !== undefined ? { requestRedirect: e.requestRedirect } : {}),
    alwaysSetCookie: e.alwaysSetCookie === true,
    timeoutMs: e.timeoutMs ?? EXTERNAL_AUTH_TIMEOUT_MS,
    ...(cache !== undefined ? { cache } : {}),
  };
}
