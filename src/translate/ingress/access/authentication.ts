/**
 * An Ingress's authentication from ingress-nginx's annotations, applied with the AuthPolicies
 * (policies/auth-policy.ts, where the Secrets are): the routes get one `RouteAuth` whose source is the
 * Ingress, holding
 * - basic authentication (internal/ingress/annotations/auth): `auth-type: basic` with the users of
 *   `auth-secret` (`[<namespace>/]<name>`, the Ingress's namespace only), read as `auth-secret-type:
 *   auth-file` (default; the htpasswd text under the key `auth`) or `auth-map` (one entry per user, the
 *   value its hash), and `auth-realm` as the challenge's realm ("" when absent, as nginx's `auth_basic ""`);
 * - forward authentication, `auth-url` and friends (external-auth.ts), checked after the password when
 *   both are set, as nginx's access phase runs them under `satisfy all`;
 * - `satisfy: any`, the address lists standing in for both.
 * Never open: `digest` (which needs nginx's digest module) and anything that cannot be enforced as written
 * make the routes answer 401, with a problem naming the annotation; a bad htpasswd line refuses that user
 * only (warning).
 */
import type { Problem, RouteAuth, SourceRef } from "../../../model/index.ts";
import { AUTH_SECRET, authSecretKey } from "../../../sources/nginx-references.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { basicUsers, type SecretIndex, type UserTableFormat } from "../../common/credential-secrets.ts";
import { annotationOf } from "../../common/objects.ts";
import { problem } from "../../common/problems.ts";
import { NGINX_PREFIX } from "../annotations/nginx-annotations.ts";
import { EXTERNAL_AUTH_ANNOTATIONS, externalAuthOf } from "./external-auth.ts";

export const BASIC_AUTH_ANNOTATIONS = ["auth-type", "auth-secret", "auth-secret-type", "auth-realm"] as const;
/** `any`: the Ingress's allow lists stand in for credentials (model `RouteAuth.satisfy`). */
const SATISFY = "satisfy";

const formats: Readonly<Record<string, UserTableFormat>> = { "auth-file": "File", "auth-map": "Map" };

const ASKING = [...BASIC_AUTH_ANNOTATIONS, ...EXTERNAL_AUTH_ANNOTATIONS, SATISFY];
const EXTERNAL_AUTH_SET: ReadonlySet<string> = new Set(EXTERNAL_AUTH_ANNOTATIONS);
const ENABLE_GLOBAL_AUTH = "enable-global-auth";
/** Paths global authentication never guards, as ingress-nginx's `no-auth-locations` default. */
const NO_AUTH_PREFIX = "/.well-known/acme-challenge";

/**
 * The global settings when they apply to `ing`: it sets no auth-url of its own, does not opt out with
 * `enable-global-auth: "false"`, and is not an ACME HTTP-01 solver (every path under
 * /.well-known/acme-challenge, as cert-manager writes them: certificates must still be issuable).
 */
function usesGlobalAuth(
  ing: Ingress,
  globalAuth: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> | undefined {
  if (globalAuth === undefined) return undefined;
  if ((annotationOf(ing, `${NGINX_PREFIX}auth-url`)?.trim() ?? "") !== "") return undefined;
  if (
    annotationOf(ing, NGINX_PREFIX + ENABLE_GLOBAL_AUTH)
      ?.trim()
      .toLowerCase() === "false"
  )
    return undefined;
  const paths = (ing.spec?.rules ?? []).flatMap((r) => r?.http?.paths ?? []).map((p) => p?.path ?? "");
  if (paths.length > 0 && paths.every((p) => p.startsWith(NO_AUTH_PREFIX))) return undefined;
  return globalAuth;
}

/** True when the Ingress carries any authentication annotation or global auth applies (a RouteAuth or a problem). */
export function asksForAuthentication(ing: Ingress, globalAuth?: Readonly<Record<string, string>>): boolean {
  return (
    ASKING.some((n) => annotationOf(ing, NGINX_PREFIX + n) !== undefined) ||
    usesGlobalAuth(ing, globalAuth) !== undefined
  );
}

/**
 * The RouteAuth the Ingress's annotations ask for (undefined: none; a stray auth-secret without auth-type
 * is reported), its problems pushed to `problems`.
 */
export function ingressAuthentication(
  ing: Ingress,
  ref: SourceRef,
  secrets: SecretIndex,
  problems: Problem[],
  globalAuth?: Readonly<Record<string, string>>,
): RouteAuth | undefined {
  const raw = (name: string) => annotationOf(ing, NGINX_PREFIX + name);
  const global = usesGlobalAuth(ing, globalAuth);
  const bad = (name: string, value: string, why: string) =>
    problems.push(
      problem(
        ref,
        "InvalidAnnotation",
        `annotation ${NGINX_PREFIX}${name} ${JSON.stringify(value.slice(0, 120))}: ${why}`,
      ),
    );
  const errors: string[] = [];
  const external = externalAuthOf({
    // The global settings stand in for the Ingress's own auth-* (as ingress-nginx's global-auth-* do).
    raw: global === undefined ? raw : (name) => (EXTERNAL_AUTH_SET.has(name) ? global[name] : raw(name)),
    bad(name, value, why, closed) {
      bad(name, value, why);
      if (closed) errors.push(`${name}: ${why}`);
    },
    notApplied(names, why) {
      const list = names.map((n) => NGINX_PREFIX + n).join(", ");
      problems.push(
        problem(ref, "AnnotationNotApplied", `annotation ${list}: ${why}; not applied`, "warning"),
      );
    },
  });
  const type = raw("auth-type");
  if (type === undefined || type.trim() === "") {
    const stray = [...BASIC_AUTH_ANNOTATIONS.slice(1), ...(external ? [] : [SATISFY])].filter(
      (n) => raw(n) !== undefined,
    );
    if (stray.length > 0)
      problems.push(
        problem(
          ref,
          "AnnotationNotApplied",
          `annotation ${stray.map((n) => NGINX_PREFIX + n).join(", ")}: no ${NGINX_PREFIX}auth-type asks for ${external ? "basic authentication" : "authentication"}; not applied`,
          "warning",
        ),
      );
    if (external === undefined) return undefined;
    const satisfy = satisfyOf(raw(SATISFY), bad);
    return {
      policy: ref,
      ...(errors.length > 0 ? { failClosed: errors.join("; ") } : {}),
      external,
      ...(satisfy === "Any" ? { satisfy } : {}),
      authorization: { requiredScopes: [], requiredClaims: [] },
      claimToHeaders: [],
    };
  }
  const warnings: string[] = [];
  const t = type.trim();
  if (t === "digest") {
    const why =
      "digest authentication is not supported (nginx's digest module has no counterpart); every path answers 401";
    bad("auth-type", type, why);
    errors.push(`auth-type digest: ${why}`);
  } else if (t !== "basic") {
    bad("auth-type", type, 'must be "basic" ("digest" is not supported); every path answers 401');
    errors.push(`auth-type ${JSON.stringify(t.slice(0, 40))} is not "basic"`);
  }
  const formatText = raw("auth-secret-type")?.trim() || "auth-file";
  const format = formats[formatText];
  if (format === undefined) {
    bad("auth-secret-type", formatText, 'must be "auth-file" or "auth-map"; every path answers 401');
    errors.push("auth-secret-type is neither auth-file nor auth-map");
  }
  const secretValue = raw(AUTH_SECRET) ?? "";
  const secret = authSecretKey(secretValue, ref.namespace);
  if (secret === undefined || "why" in secret) {
    const why = secret === undefined ? "no Secret named" : secret.why;
    bad(AUTH_SECRET, secretValue, `${why}; every path answers 401`);
    errors.push(`auth-secret: ${why}`);
  }
  const satisfy = satisfyOf(raw(SATISFY), bad);
  const realmText = raw("auth-realm") ?? "";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a realm is sent in a header
  const realmOk = !/[\u0000-\u001f\u007f]/.test(realmText);
  if (!realmOk) bad("auth-realm", realmText, 'holds control characters; the realm is ""');
  const field = `annotation ${NGINX_PREFIX}${AUTH_SECRET}`;
  // The Secret is read only when the rest can be enforced (a digest Ingress is not told about its lines).
  const users =
    errors.length === 0 && secret !== undefined && "key" in secret && format !== undefined
      ? (basicUsers(secrets, secret.key, format, "auth", field, errors, warnings) ?? [])
      : [];
  // A missing or unusable Secret is reported here; the annotation problems above already say their own.
  for (const e of errors)
    if (e.startsWith(field))
      problems.push(problem(ref, "AuthSecretUnusable", `${e}; every path answers 401`));
  for (const w of warnings) problems.push(problem(ref, "CredentialWarning", w, "warning"));
  return {
    policy: ref,
    ...(errors.length > 0 ? { failClosed: errors.join("; ") } : {}),
    basic: { realm: realmOk ? realmText : "", users },
    ...(external !== undefined ? { external } : {}),
    ...(satisfy === "Any" ? { satisfy } : {}),
    authorization: { requiredScopes: [], requiredClaims: [] },
    claimToHeaders: [],
  };
}

/**
 * ingress-nginx's `satisfy` (`any` or `all`, trimmed, any case; absent or empty: all). Another value is
 * reported and read as `all`: every guard must pass, never fewer.
 */
function satisfyOf(
  value: string | undefined,
  bad: (name: string, value: string, why: string) => void,
): "Any" | undefined {
  const v = value?.trim().toLowerCase() ?? "";
  if (v === "any") return "Any";
  if (v !== "" && v !== "all") bad(SATISFY, value ?? "", 'must be "any" or "all"; read as "all"');
  return undefined;
}

/** Each asking Ingress's RouteAuth, built when its first route is met (so Ingresses of other classes stay quiet). */
export interface IngressAuthentications {
  /** The RouteAuth for routes of this Ingress; undefined: it asks for none. */
  authFor(ingress: SourceRef): RouteAuth | undefined;
  /** An AuthPolicy won the Ingress's routes: its annotations are not applied (reported once). */
  superseded(ingress: SourceRef, policy: SourceRef): void;
}

/** undefined when no Ingress carries the annotations (the common case: routes are not walked for them). */
export function ingressAuthentications(
  ingresses: readonly (Ingress | undefined)[],
  secrets: SecretIndex,
  problems: Problem[],
  globalAuth?: Readonly<Record<string, string>>,
): IngressAuthentications | undefined {
  const asking = new Map<string, Ingress>();
  for (const ing of ingresses)
    if (ing?.metadata && asksForAuthentication(ing, globalAuth))
      asking.set(`${ing.metadata.namespace ?? "default"}/${ing.metadata.name}`, ing);
  if (asking.size === 0) return undefined;
  const built = new Map<string, RouteAuth | undefined>();
  const told = new Set<string>();
  return {
    authFor(ingress) {
      const key = `${ingress.namespace}/${ingress.name}`;
      if (built.has(key)) return built.get(key);
      const ing = asking.get(key);
      const auth =
        ing === undefined ? undefined : ingressAuthentication(ing, ingress, secrets, problems, globalAuth);
      built.set(key, auth);
      return auth;
    },
    superseded(ingress, policy) {
      const key = `${ingress.namespace}/${ingress.name}`;
      if (told.has(key) || !asking.has(key)) return;
      told.add(key);
      const ing = asking.get(key);
      const set = ASKING.filter(
        (n) => ing !== undefined && annotationOf(ing, NGINX_PREFIX + n) !== undefined,
      );
      const what =
        set.length > 0 ? `annotation ${set.map((n) => NGINX_PREFIX + n).join(", ")}` : "--global-auth-url";
      const message = `${what}: AuthPolicy ${policy.namespace}/${policy.name} authenticates this Ingress's routes instead${set.includes(SATISFY) ? " (with its own spec.satisfy)" : ""}; not applied`;
      problems.push(problem(ingress, "AnnotationSuperseded", message, "warning"));
    },
  };
}
