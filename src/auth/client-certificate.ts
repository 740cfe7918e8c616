/**
 * A route's client-certificate demand (model `clientCertificate`, ingress-nginx `auth-tls-*`), checked on
 * each request against what its connection's handshake settled, the same way by both fronts' guards:
 * - a demand the translator refused (a CA it could not read): 403, as ingress-nginx's AuthTLSError;
 * - a host (the one routing used: an absolute-form target's authority, else Host) that is not the
 *   connection's SNI name, both normalised alike, or no SNI: 421 (nginx's rule when `ssl_verify_client` is
 *   on: the certificate was verified for the SNI name's settings, not this host's);
 * - `off`: any certificate presented is ignored (nginx asks for none): NONE, and match-cn sees "";
 * - `on`: no certificate: 400 "No required SSL certificate was sent" (nginx 496); one the host's CAs did
 *   not verify, or a chain longer than the depth allows: 400 "The SSL certificate error" (495);
 *   `optional` refuses the second only; `optional_no_ca` neither. With an error page, both are a 302 to it;
 * - `auth-tls-match-cn`: the subject DN (RFC 2253) must match, else 403 "client certificate unauthorized";
 * - passed: `ssl-client-verify` (SUCCESS, FAILED:…, NONE), `ssl-client-subject-dn`, `ssl-client-issuer-dn`,
 *   and with `passCertificate` `ssl-client-cert` (the PEM, URL-encoded as nginx's
 *   `$ssl_client_escaped_cert`), set upstream in place of whatever the client sent under those names.
 * A front that cannot see the handshake (`--front bun`: Bun.serve exposes no client certificate) answers
 * 500 unless nothing needs checking (never open); one that sees only the SNI name (node:http2) answers
 * 421 for another host, else 500. Plain HTTP has no certificate: `on` refuses.
 */
import type * as Crypto from "node:crypto";
import type { RouteClientCertificate } from "../model/index.ts";
import { compileRegex, type ValueRegex } from "../proxy/match/regex/regex.ts";
import { normaliseServername } from "../proxy/match/servername.ts";
import { textResponse } from "../proxy/request/responses.ts";

/** The demand with its CN pattern compiled (linear-time engine). */
export interface CompiledClientCertificate {
  readonly demand: RouteClientCertificate;
  readonly cn: ValueRegex | undefined;
}

export function compileClientCertificate(
  d: RouteClientCertificate | undefined,
): CompiledClientCertificate | undefined {
  if (d === undefined) return undefined;
  const cn = d.matchCN === undefined ? undefined : compileRegex(`.*(?:${d.matchCN}).*`).regex;
  // A pattern the translator accepted always compiles; if one did not, refuse rather than skip the check.
  if (d.matchCN !== undefined && cn === undefined)
    return { demand: { ...d, refused: "auth-tls-match-cn does not compile" }, cn };
  return { demand: d, cn };
}

/**
 * What the guard sees of the handshake: undefined on plain HTTP, `unknown` where the front cannot see it,
 * `unseen` where it sees the SNI name but not the certificate (node:http2's servers).
 */
export type HandshakeView =
  | { readonly servername: string; readonly authorized: boolean; readonly chain: readonly Buffer[] }
  | { readonly servername: string; readonly unseen: true }
  | "unknown"
  | undefined;

/** The request headers the upstream gets, and the names taken out of what the client sent. */
export const CLIENT_CERT_HEADERS = [
  "ssl-client-verify",
  "ssl-client-subject-dn",
  "ssl-client-issuer-dn",
  "ssl-client-cert",
] as const;

export type ClientCertificateResult =
  | { readonly ok: true; readonly set: readonly (readonly [string, string])[] }
  | { readonly ok: false; readonly response: Response };

export function checkClientCertificate(
  cc: CompiledClientCertificate,
  view: HandshakeView,
  /** The host routing used, normalised (match/host.ts `normaliseHost`). */
  routedHost: string,
  serverHeader: string,
): ClientCertificateResult {
  const d = cc.demand;
  const refuse = (status: number, body: string) => ({
    ok: false as const,
    response: textResponse(status, `${body}\n`, serverHeader),
  });
  if (d.refused !== undefined) return refuse(403, "Forbidden");
  // `off`: nginx asks for no certificate, so whatever this connection presented (the listener asks every
  // client when one host wants one) is ignored, and match-cn sees nginx's empty subject.
  if (d.verify === "off") {
    if (cc.cn !== undefined && !cc.cn.test("")) return refuse(403, "client certificate unauthorized");
    return { ok: true, set: [["ssl-client-verify", "NONE"]] };
  }
  if (view === "unknown") return refuse(500, "Internal Server Error");
  // Both sides normalised as routing and the SNI table do (sni.ts): the host the route was chosen by
  // must be the name whose context verified the certificate. No SNI: no host's CAs were sure to apply.
  // Also where the certificate cannot be seen: an HTTP/2 connection to another name the server
  // certificate covers (coalescing) is sent to one of its own, where ALPN gives this host HTTP/1.1.
  if (view !== undefined) {
    const sni = normaliseServername(view.servername);
    if (sni === "" || sni !== routedHost) return refuse(421, "Misdirected Request");
  }
  const tls = view === undefined || "chain" in view ? view : undefined;
  if (view !== undefined && tls === undefined) return refuse(500, "Internal Server Error");
  const chain = tls?.chain ?? [];
  const leaf = chain[0];
  const verified = leaf !== undefined && tls?.authorized === true && chain.length - 1 <= d.depth;
  const certError = (body: string) =>
    d.errorPage === undefined
      ? refuse(400, body)
      : {
          ok: false as const,
          response: new Response(null, {
            status: 302,
            headers: { location: d.errorPage, server: serverHeader },
          }),
        };
  if (d.verify === "on" && leaf === undefined) return certError("No required SSL certificate was sent");
  if ((d.verify === "on" || d.verify === "optional") && leaf !== undefined && !verified)
    return certError("The SSL certificate error");
  const info = leaf === undefined ? undefined : certificateInfo(leaf);
  if (cc.cn !== undefined && !cc.cn.test(info?.subject ?? ""))
    return refuse(403, "client certificate unauthorized");
  const status =
    leaf === undefined
      ? "NONE"
      : verified
        ? "SUCCESS"
        : tls?.authorized
          ? "FAILED:certificate chain too long"
          : "FAILED:unable to verify the client certificate";
  const set: [string, string][] = [["ssl-client-verify", status]];
  if (info !== undefined) {
    if (info.subject !== "") set.push(["ssl-client-subject-dn", info.subject]);
    if (info.issuer !== "") set.push(["ssl-client-issuer-dn", info.issuer]);
    if (d.passCertificate) set.push(["ssl-client-cert", info.escapedPem]);
  }
  return { ok: true, set };
}

interface CertificateInfo {
  readonly subject: string;
  readonly issuer: string;
  readonly escapedPem: string;
}

/**
 * Parsed once per certificate (a keep-alive connection sends many requests with one), keyed by the DER
 * itself: a non-cryptographic hash could be made to collide, and the subject decides match-cn.
 */
const infos = new Map<string, CertificateInfo>();

function certificateInfo(der: Buffer): CertificateInfo {
  const key = der.toString("latin1");
  let info = infos.get(key);
  if (info === undefined) {
    const { X509Certificate } = require("node:crypto") as typeof Crypto;
    const cert = new X509Certificate(der);
    const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
    const pem = `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
    info = {
      subject: rfc2253(cert.subject),
      issuer: rfc2253(cert.issuer),
      escapedPem: encodeURIComponent(pem),
    };
    if (infos.size >= 1024) infos.clear();
    infos.set(key, info);
  }
  return info;
}

/**
 * node:crypto's `C=US\nO=Acme\nCN=alice` as nginx's `$ssl_client_s_dn` (RFC 2253: most specific first,
 * comma-separated, specials backslash-escaped); bytes outside printable ASCII as `\XX` hex (RFC 4514), so
 * the value is always a valid header.
 */
export function rfc2253(dn: string): string {
  return dn
    .split("\n")
    .filter((rdn) => rdn !== "")
    .reverse()
    .map((rdn) => {
      const eq = rdn.indexOf("=");
      return `${rdn.slice(0, eq + 1)}${escapeValue(rdn.slice(eq + 1))}`;
    })
    .join(",");
}

function escapeValue(v: string): string {
  let out = "";
  for (const ch of v) {
    const c = ch.codePointAt(0) as number;
    if (',+"\\<>;'.includes(ch)) out += `\\${ch}`;
    else if (c < 0x20 || c > 0x7e)
      for (const b of Buffer.from(ch, "utf8")) out += `\\${b.toString(16).toUpperCase().padStart(2, "0")}`;
    else out += ch;
  }
  return out;
}
