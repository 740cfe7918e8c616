/**
 * BackendTLSPolicy `subjectAltNames`: a backend's certificate must carry one of the listed names, in place
 * of the check against `validation.hostname` (which stays the SNI). `Hostname` is compared with the
 * certificate's DNS names (case-insensitive; a certificate name `*.example.com` covers exactly one more
 * label, RFC 6125 §6.4.3), `URI` with its URI names (exactly). The check runs as the TLS client's
 * `checkServerIdentity`, after the chain has been verified; an Error rejects the connection.
 */
import type { BackendSubjectAltName } from "../../model/index.ts";

/** The names of a certificate's subjectAltName as Node and Bun print it: `DNS:a, URI:b, IP Address:c`. */
export function parseSubjectAltName(text: string): { dns: string[]; uri: string[] } {
  const dns: string[] = [];
  const uri: string[] = [];
  for (const entry of splitEntries(text)) {
    const colon = entry.indexOf(":");
    if (colon < 0) continue;
    const type = entry.slice(0, colon);
    let value = entry.slice(colon + 1);
    // Node quotes a value that holds a comma or quote (JSON); read it back whole.
    if (value.startsWith('"')) {
      try {
        value = JSON.parse(value) as string;
      } catch {
        continue;
      }
    }
    if (type === "DNS") dns.push(value.toLowerCase());
    else if (type === "URI") uri.push(value);
  }
  return { dns, uri };
}

/** Entries are separated by ", " outside quotes. */
function splitEntries(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' && text[i - 1] !== "\\") quoted = !quoted;
    else if (!quoted && c === "," && text[i + 1] === " ") {
      out.push(text.slice(start, i));
      start = i + 2;
      i++;
    }
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

/** Whether a certificate DNS name (maybe `*.`-prefixed) covers `host` (lower case). */
export function dnsNameCovers(certName: string, host: string): boolean {
  if (!certName.startsWith("*.")) return certName === host;
  const dot = host.indexOf(".");
  return dot > 0 && host.slice(dot) === certName.slice(1);
}

/** A `checkServerIdentity` that accepts a certificate carrying one of `names`. */
export function subjectAltNameCheck(
  names: readonly BackendSubjectAltName[],
): (host: string, cert: { subjectaltname?: string }) => Error | undefined {
  const hostnames = names.filter((n) => n.type === "Hostname").map((n) => n.value.toLowerCase());
  const uris = names.filter((n) => n.type === "URI").map((n) => n.value);
  return (_host, cert) => {
    const { dns, uri } = parseSubjectAltName(cert.subjectaltname ?? "");
    if (hostnames.some((h) => dns.some((d) => dnsNameCovers(d, h)))) return undefined;
    if (uris.some((u) => uri.includes(u))) return undefined;
    const err = new Error(
      `backend certificate carries none of the subjectAltNames asked for (${names.map((n) => n.value).join(", ")}); it has ${cert.subjectaltname ?? "none"}`,
    );
    (err as Error & { code: string }).code = "ERR_TLS_CERT_ALTNAME_INVALID";
    return err;
  };
}
