/**
 * The spec of an AuthPolicy, judged field by field (the source schema only checks the envelope, so a
 * wrong policy still attaches and fails closed). Unknown fields are errors: a typo such as `audience`
 * for `audiences` must not silently weaken a check.
 */
import { z } from "zod";

const str = z.string().min(1);
const secretRef = z.object({ name: str, key: str.optional() }).strict();
const claimName = z.string().regex(/^[A-Za-z0-9_:.\-/]+$/, "claim names are letters, digits and _ : . - /");
const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "not a valid header name");

export const asymmetricAlgorithms = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;

const algorithms = z
  .array(
    z.string().refine((a) => (asymmetricAlgorithms as readonly string[]).includes(a), {
      message: `only asymmetric algorithms are accepted: ${asymmetricAlgorithms.join(", ")}`,
    }),
  )
  .min(1)
  .optional();
const clockSkewSeconds = z.number().int().min(0).max(300).optional();

const tokenSource = z.discriminatedUnion("type", [
  z.object({ type: z.literal("Header"), name: str, prefix: z.string().optional() }).strict(),
  z.object({ type: z.literal("Cookie"), name: str }).strict(),
  z.object({ type: z.literal("QueryParameter"), name: str }).strict(),
]);

const provider = z
  .object({
    name: str,
    issuer: str,
    audiences: z.array(str).optional(),
    /** Explicit opt-out; the default (true) requires `audiences`. */
    audienceCheck: z.boolean().optional(),
    keys: z.discriminatedUnion("type", [
      z.object({ type: z.literal("RemoteJWKS"), uri: str }).strict(),
      z.object({ type: z.literal("Discovery") }).strict(),
      z.object({ type: z.literal("Secret"), secretRef }).strict(),
    ]),
    algorithms,
    clockSkewSeconds,
  })
  .strict();

export const authPolicySpec = z
  .object({
    targetRefs: z.array(z.unknown()),
    jwt: z
      .object({ providers: z.array(provider).max(8), tokenSources: z.array(tokenSource).min(1).optional() })
      .strict()
      .optional(),
    oidc: z
      .object({
        issuer: str,
        clientID: str,
        clientSecretRef: secretRef,
        redirectURL: str,
        logoutPath: z.string().startsWith("/").optional(),
        postLogoutRedirectURL: str.optional(),
        scopes: z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "not a valid scope")).optional(),
        cookieDomain: z
          .string()
          .regex(/^[a-z0-9.-]+$/)
          .optional(),
        sessionKeyRef: secretRef,
        algorithms,
        clockSkewSeconds,
      })
      .strict()
      .optional(),
    /** Basic authentication from an htpasswd user table (auth-policy-credentials.ts). */
    basicAuth: z
      .object({
        secretRef,
        format: z.enum(["File", "Map"]).optional(),
        // Shown in a quoted-string: no quote, backslash or control character.
        realm: z
          .string()
          .max(256)
          .regex(/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/, "printable ASCII without quotes or backslashes")
          .optional(),
        forwardUsernameHeader: headerName.optional(),
      })
      .strict()
      .optional(),
    /** API keys from Secrets, one `name: key` per entry (auth-policy-credentials.ts). */
    apiKeyAuth: z
      .object({
        credentialRefs: z
          .array(z.object({ name: str }).strict())
          .min(1)
          .max(16),
        extractFrom: z
          .array(
            z.discriminatedUnion("type", [
              z.object({ type: z.literal("Header"), name: headerName }).strict(),
              z.object({ type: z.literal("QueryParameter"), name: str }).strict(),
            ]),
          )
          .min(1)
          .max(8)
          .optional(),
        forwardClientIDHeader: headerName.optional(),
        sanitize: z.boolean().optional(),
      })
      .strict()
      .optional(),
    authorization: z
      .object({
        requiredScopes: z.array(str).optional(),
        requiredClaims: z
          .array(z.object({ name: claimName, values: z.array(z.string()).min(1) }).strict())
          .optional(),
      })
      .strict()
      .optional(),
    /** Forward authentication: a service decides (auth-policy-external.ts checks the values). */
    externalAuth: z
      .object({
        url: str,
        method: z.enum(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]).optional(),
        signinURL: str.optional(),
        signinRedirectParam: z
          .string()
          .regex(/^[A-Za-z0-9_.~-]+$/, "a query parameter name")
          .optional(),
        responseHeaders: z.array(headerName).max(32).optional(),
        requestRedirect: str.optional(),
        alwaysSetCookie: z.boolean().optional(),
        timeoutMs: z.number().int().min(100).max(60_000).optional(),
        cache: z.object({ key: str, durations: str.optional() }).strict().optional(),
      })
      .strict()
      .optional(),
    /** `Any`: an address the allow lists admit needs no credentials (model `RouteAuth.satisfy`). */
    satisfy: z.enum(["All", "Any"]).optional(),
    /** Client address lists (auth-policy-ip.ts checks each entry, so a bad one names its index). */
    ipAllowList: z.array(z.string()).max(1024).optional(),
    ipDenyList: z.array(z.string()).max(1024).optional(),
    claimToHeaders: z
      .array(
        z
          .object({
            claim: claimName,
            header: z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "not a valid header name"),
          })
          .strict(),
      )
      .max(16)
      .optional(),
  })
  .strict();

export type AuthPolicySpec = z.infer<typeof authPolicySpec>;

/** Headers a claim may never be copied into: they steer the proxy or the connection itself. */
export const reservedHeaders = new Set([
  "host",
  "authorization",
  "cookie",
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "proxy-authorization",
  "proxy-connection",
]);

/** `field: message` for the first few issues, like the source schemas report them. */
export function describeSpecIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const path = issue.path.reduce<string>(
        (out, p) => (typeof p === "number" ? `${out}[${p}]` : `${out}${out ? "." : ""}${String(p)}`),
        "spec",
      );
      const what =
        issue.code === "unrecognized_keys"
          ? `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(", ")}`
          : issue.message;
      return `${path}: ${what}`;
    })
    .join("; ");
}

/** Issuers and key URLs must be https, except on loopback (tests and sidecar IdPs). */
export function checkURL(value: string, field: string, allowHttp = false): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${field} "${withoutCredentials(value)}": not an absolute URL`;
  }
  const shown = withoutCredentials(value);
  const loopback = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(url.hostname);
  if (url.protocol === "https:" || (url.protocol === "http:" && (loopback || allowHttp))) {
    if (url.username || url.password) return `${field} "${shown}": must not carry credentials`;
    return undefined;
  }
  return `${field} "${shown}": must be https (http only on loopback)`;
}

/**
 * A URL as it may be shown in a status message, a log line or the model dump: any `user:password@`
 * replaced, so credentials written into a policy never travel further than the policy itself.
 */
export function withoutCredentials(value: string): string {
  return value.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/?#@]*@/, "$1<redacted>@");
}
