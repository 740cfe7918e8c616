/**
 * A redirect `Location` written as text with nginx variables (`https://$host$request_uri`): the one check
 * for ingress-nginx's `permanent-redirect`/`temporal-redirect` and for the `location` of Gatehouse's
 * HTTPRouteFilter. The variables are those model/location-template.ts fills; the text must be URL
 * characters, and the URL absolute http(s) with a host once filled.
 */
import { fillLocation, parseLocationTemplate } from "../../model/location-template.ts";

/** Characters a URL may hold (RFC 3986 reserved and unreserved, `%` for escapes); `$` starts a variable. */
const URL_CHARS = /^[A-Za-z0-9\-._~:/?#[\]@!&'()*+,;=%]*$/;

/** What the variables become to check the URL's shape (the request's values are not known yet). */
const SAMPLE: Readonly<Record<string, string>> = {
  scheme: "http",
  host: "host.example",
  http_host: "host.example",
  server_port: "80",
  request_uri: "/",
  uri: "/",
};

/** Why `location` (already trimmed) cannot be a redirect's Location, or undefined when it can. */
export function redirectLocationProblem(location: string): string | undefined {
  const parsed = parseLocationTemplate(location);
  if (!parsed.ok) return parsed.message;
  if (!parsed.parts.every((p) => !("text" in p) || URL_CHARS.test(p.text)))
    return "holds characters a URL cannot (spaces, quotes, <>, \\, ^, `, {}, |, non-ASCII)";
  const sample = fillLocation(parsed.parts, (variable) => SAMPLE[variable] ?? "");
  if (!/^https?:\/\/[^/?#]/.test(sample)) return "must be an absolute http:// or https:// URL";
  let host = "";
  try {
    host = new URL(sample).hostname;
  } catch {
    // reported below
  }
  return host === "" ? "is not a URL with a host" : undefined;
}
