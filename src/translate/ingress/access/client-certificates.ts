/**
 * ingress-nginx's client certificates (internal/ingress/annotations/authtls; nginx.tmpl writes them into
 * the host's server block: `ssl_client_certificate`, `ssl_verify_client`, `ssl_verify_depth`,
 * `error_page 495 496`, the `$ssl_client_s_dn` check, the `ssl-client-*` request headers):
 * - `auth-tls-secret: <namespace>/<name>`: a Secret whose `ca.crt` (PEM) verifies client certificates; the
 *   other annotations do nothing without it (as in ingress-nginx, reported here);
 * - `auth-tls-verify-client: on|off|optional|optional_no_ca` (default `on`; another value is reported and
 *   `on` applies, as ingress-nginx falls back to its default);
 * - `auth-tls-verify-depth: N` (default 1; 0 or a bad value: 1);
 * - `auth-tls-error-page: URL`: where a client refused for its certificate is redirected (302);
 * - `auth-tls-match-cn: CN=<regex>`: the subject DN must match (our linear-time engine), else 403;
 * - `auth-tls-pass-certificate-to-upstream: true`: the certificate goes upstream in `ssl-client-cert`.
 * Never open where ingress-nginx would be: a Secret that is missing, unreadable, in another namespace,
 * without `ca.crt` (ingress-nginx then drops mutual TLS for the host) or with a `ca.crt` that is not PEM
 * certificates, and a match-cn that cannot be compiled, make every path of the host answer 403
 * (`refused`), as ingress-nginx's AuthTLSError does.
 */
import type { RouteClientCertificate } from "../../../model/index.ts";
import { compileRegex } from "../../../proxy/match/regex/regex.ts";
import { AUTH_TLS_SECRET, authTLSSecretKey } from "../../../sources/nginx-references.ts";
import type { Secret } from "../../../sources/schema/core.ts";
import type { UnreadableObject } from "../../../sources/snapshot.ts";
import { caBundleProblem } from "../../common/ca-bundle.ts";
import { secretText } from "../../common/objects.ts";
import type { AnnotationReader } from "../annotations/route-edits.ts";
import { boolAnnotation } from "../annotations/route-edits.ts";

export const AUTH_TLS_ANNOTATIONS = [
  AUTH_TLS_SECRET,
  "auth-tls-verify-client",
  "auth-tls-verify-depth",
  "auth-tls-error-page",
  "auth-tls-match-cn",
  "auth-tls-pass-certificate-to-upstream",
] as const;

/** One Ingress's client-certificate settings: what its hosts' routes demand and the CAs their SNI entries carry. */
export interface IngressClientCertificate {
  readonly demand: RouteClientCertificate;
  /** The CA bundle; absent when the settings are refused or `verify` is `off`. */
  readonly caPem?: string;
}

const VERIFY = new Set(["on", "off", "optional", "optional_no_ca"]);
/**
 * ingress-nginx's redirectRegex for auth-tls-error-page, less its `@named` locations (Gatehouse has none):
 * an optional `http(s)://host[:port]` and a path of plain segments. Run by the linear-time engine.
 */
const ERROR_PAGE = compileRegex("((https?://)?[A-Za-z0-9\\-.]+(:[0-9]+)?)?(/[A-Za-z0-9\\-_.]+)*/?").regex;

/** Where the CA bundles come from: Secrets by `namespace/name`, and what the source could not read. */
export interface SecretSources {
  readonly secrets: ReadonlyMap<string, Secret>;
  readonly unreadable: readonly UnreadableObject[];
}

/** The settings `r` asks for (undefined: none), problems reported through `r`. */
export function readClientCertificate(
  r: AnnotationReader,
  namespace: string,
  sources: SecretSources,
): IngressClientCertificate | undefined {
  const raw = r.raw(AUTH_TLS_SECRET);
  if (raw === undefined || raw.trim() === "") {
    for (const name of AUTH_TLS_ANNOTATIONS.slice(1)) {
      const v = r.raw(name);
      if (v !== undefined)
        r.bad(name, v, `does nothing without ${AUTH_TLS_SECRET} (as in ingress-nginx); not applied`);
    }
    return undefined;
  }
  const verify = verifyOf(r);
  const depth = depthOf(r);
  const errorPage = errorPageOf(r);
  const passCertificate = boolAnnotation(r, "auth-tls-pass-certificate-to-upstream") ?? false;
  const base = { verify, depth, passCertificate, ...(errorPage ? { errorPage } : {}) };
  const closed = (why: string): IngressClientCertificate => ({ demand: { ...base, refused: why } });
  const cn = r.raw("auth-tls-match-cn");
  let matchCN: string | undefined;
  if (cn !== undefined && cn !== "") {
    const why = matchCNProblem(cn);
    if (why !== undefined) {
      r.bad("auth-tls-match-cn", cn, `${why}, so every path of the host answers 403 (never open)`);
      return closed(`auth-tls-match-cn ${JSON.stringify(cn)} cannot be applied`);
    }
    matchCN = cn;
    // Applied as nginx does, but worth a word: neither mode verifies the certificate the pattern reads.
    if (verify === "off")
      r.bad(
        "auth-tls-match-cn",
        cn,
        'with auth-tls-verify-client off no certificate is read, so the subject is empty (as in nginx): every path the pattern does not match on "" answers 403',
      );
    else if (verify === "optional_no_ca")
      r.bad(
        "auth-tls-match-cn",
        cn,
        "with auth-tls-verify-client optional_no_ca the certificate is not verified: any client can present a self-signed one with a matching subject (as in nginx); applied",
      );
  }
  const demand: RouteClientCertificate = { ...base, ...(matchCN ? { matchCN } : {}) };
  const key = authTLSSecretKey(raw, namespace);
  const secret = "key" in key ? findCA(key.key, sources) : key.why;
  if (typeof secret === "string" && secret !== "") {
    r.bad(AUTH_TLS_SECRET, raw, `${secret}, so every path of the host answers 403 (never open)`);
    return closed(`${AUTH_TLS_SECRET} ${JSON.stringify(raw)}: ${secret}`);
  }
  if (verify === "off") return { demand };
  return { demand, caPem: (secret as { pem: string }).pem };
}

/** The `ca.crt` of the Secret `key`, or why it cannot be used. */
export function findCA(key: string, sources: SecretSources): { pem: string } | string {
  const unread = sources.unreadable.find((u) => u.kind === "Secret" && `${u.namespace}/${u.name}` === key);
  if (unread) return `Secret ${key} could not be read: ${unread.why}`;
  const secret = sources.secrets.get(key);
  if (!secret) return `Secret ${key} not found`;
  const pem = secretText(secret, "ca.crt");
  if (pem === undefined) return `Secret ${key} has no ca.crt`;
  const bad = caBundleProblem(pem);
  return bad === undefined ? { pem } : `Secret ${key}: ca.crt ${bad}`;
}

function verifyOf(r: AnnotationReader): RouteClientCertificate["verify"] {
  const v = r.raw("auth-tls-verify-client");
  if (v === undefined || v === "") return "on";
  if (VERIFY.has(v)) return v as RouteClientCertificate["verify"];
  r.bad("auth-tls-verify-client", v, 'must be on, off, optional or optional_no_ca; "on" applies');
  return "on";
}

function depthOf(r: AnnotationReader): number {
  const v = r.raw("auth-tls-verify-depth");
  if (v === undefined || v.trim() === "") return 1;
  const n = /^[0-9]{1,3}$/.test(v.trim()) ? Number(v.trim()) : Number.NaN;
  if (Number.isNaN(n)) {
    r.bad("auth-tls-verify-depth", v, "must be a whole number from 1 to 999; 1 applies");
    return 1;
  }
  return n === 0 ? 1 : n;
}

function errorPageOf(r: AnnotationReader): string | undefined {
  const v = r.raw("auth-tls-error-page");
  if (v === undefined || v === "") return undefined;
  if (v.length <= 2048 && ERROR_PAGE?.test(v) === true) return v;
  return r.bad(
    "auth-tls-error-page",
    v,
    "must be a URL or path of letters, digits, '-', '_' and '.' (ingress-nginx's rule; no @named locations); refused clients get the 400 instead; not applied",
  );
}

/** Why a match-cn value cannot be applied: ingress-nginx's `CN=` prefix, then our engine's compiler. */
function matchCNProblem(value: string): string | undefined {
  if (!value.startsWith("CN=")) return "must start with CN= (ingress-nginx's rule)";
  const compiled = compileRegex(unanchored(value));
  return compiled.error === undefined ? undefined : `is not a pattern Gatehouse can run (${compiled.error})`;
}

/** nginx's `~` finds the pattern anywhere in the DN; our engine matches whole values. */
export function unanchored(pattern: string): string {
  return `.*(?:${pattern}).*`;
}
