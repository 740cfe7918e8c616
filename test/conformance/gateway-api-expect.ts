/**
 * Upstream's `CompareRoundTrip` as the README describes it: the status code (with the 408/504 timeout
 * rule), then for 200/204 the echoed request and the response headers, for redirects the Location. Pure:
 * a reply and an expectation in, the list of what did not hold out.
 */
import type { Reply } from "./gateway-api-client.ts";
import type { BackendRequest, Expected, RequestData } from "./gateway-api-data.ts";

const timeoutCodes = [408, 504];
const redirectCodes = [300, 301, 302, 303, 304, 305, 307, 308];

/** What the echo reported, as upstream's roundtripper captures it. */
export interface Captured {
  readonly path: string;
  readonly method: string;
  readonly host: string;
  readonly namespace: string;
  readonly pod: string;
  readonly headers: Readonly<Record<string, readonly string[]>>;
}

/** The echo JSON, read only when Content-Type is exactly application/json (else empty fields). */
export function capture(reply: Reply, method: string): Captured {
  const empty = { path: "", method, host: "", namespace: "", pod: "", headers: {} };
  if (reply.headers["content-type"]?.join(",") !== "application/json") return empty;
  try {
    const echo = JSON.parse(reply.body) as Partial<Captured>;
    return { ...empty, ...echo, method: echo.method || method };
  } catch {
    return empty;
  }
}

/** Problems with `reply` against `exp` (empty: the case passed this time). */
export function checkReply(exp: Expected, req: RequestData, reply: Reply): string[] {
  if (timeoutCodes.includes(reply.status) && exp.statusCodes.some((c) => timeoutCodes.includes(c))) return [];
  if (!exp.statusCodes.includes(reply.status))
    return [`status ${reply.status}, want one of [${exp.statusCodes.join(" ")}]${snippet(reply)}`];
  if (reply.status === 200 || reply.status === 204) return checkEchoed(exp, req, reply);
  if (redirectCodes.includes(reply.status) && exp.redirect) return checkRedirect(exp.redirect, reply);
  return [];
}

function checkEchoed(exp: Expected, req: RequestData, reply: Reply): string[] {
  const problems: string[] = [];
  const got = capture(reply, req.method);
  // No backendRequest: upstream expects the request itself to arrive.
  const want: BackendRequest = exp.backendRequest ?? {
    method: req.method,
    host: req.host,
    path: req.path,
    headers: req.headers,
  };
  if (want.path !== got.path) problems.push(`backend path ${q(got.path)}, want ${q(want.path)}`);
  if ((want.method || "GET") !== got.method)
    problems.push(`backend method ${got.method}, want ${want.method}`);
  if (want.host !== null && want.host !== got.host)
    problems.push(`backend host ${q(got.host)}, want ${q(want.host)}`);
  const seen = lowerKeys(got.headers);
  for (const [name, value] of Object.entries(want.headers)) {
    const actual = seen[name.toLowerCase()];
    if (!actual) problems.push(`backend header ${name} missing, want ${q(value)}`);
    else if (actual.join(",") !== value)
      problems.push(`backend header ${name} ${q(actual.join(","))}, want ${q(value)}`);
  }
  for (const name of want.absentHeaders ?? [])
    if (seen[name.toLowerCase()])
      problems.push(
        `backend header ${name} should be absent, got ${q(seen[name.toLowerCase()]?.join(",") ?? "")}`,
      );
  if (exp.namespace !== got.namespace)
    problems.push(`backend namespace ${q(got.namespace)}, want ${q(exp.namespace)}`);
  if (exp.backend !== null && !got.pod.startsWith(exp.backend))
    problems.push(`answered by pod ${q(got.pod)}, want ${exp.backend}-*`);
  problems.push(...checkResponseHeaders(exp, reply));
  return problems;
}

function checkResponseHeaders(exp: Expected, reply: Reply): string[] {
  const problems: string[] = [];
  const norm = (v: string) => (exp.ignoreWhitespaceInResponseHeaderValues ? v.replaceAll(" ", "") : v);
  const actual = (name: string) => reply.headers[name.toLowerCase()]?.join(",");
  for (const [name, value] of Object.entries(exp.responseHeaders ?? {})) {
    const got = actual(name);
    if (got === undefined) problems.push(`response header ${name} missing, want ${q(value)}`);
    else if (norm(got) !== norm(value)) problems.push(`response header ${name} ${q(got)}, want ${q(value)}`);
  }
  for (const [name, values] of Object.entries(exp.responseHeadersOneOf ?? {})) {
    const got = actual(name);
    if (got === undefined || !values.some((v) => norm(v) === norm(got)))
      problems.push(
        `response header ${name} ${got === undefined ? "missing" : q(got)}, want one of ${JSON.stringify(values)}`,
      );
  }
  for (const name of exp.responseAbsentHeaders ?? [])
    if (actual(name) !== undefined)
      problems.push(`response header ${name} should be absent, got ${q(actual(name) ?? "")}`);
  return problems;
}

function checkRedirect(want: NonNullable<Expected["redirect"]>, reply: Reply): string[] {
  const location = reply.headers.location?.[0];
  if (!location) return [`redirect ${reply.status} without a Location`];
  let url: URL;
  try {
    url = new URL(location, reply.url);
  } catch {
    return [`redirect Location ${q(location)} is not a URL`];
  }
  const problems: string[] = [];
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== want.scheme) problems.push(`redirect scheme ${scheme}, want ${want.scheme}`);
  if (want.host !== null && url.hostname !== want.host)
    problems.push(`redirect host ${q(url.hostname)}, want ${q(want.host)}`);
  // URL drops a port equal to the scheme's default, which is what `port: null` accepts.
  if ((want.port ?? "") !== url.port)
    problems.push(`redirect port ${q(url.port)}, want ${want.port === null ? "none/default" : q(want.port)}`);
  if (url.pathname !== want.path) problems.push(`redirect path ${q(url.pathname)}, want ${q(want.path)}`);
  return problems.map((p) => `${p} (Location: ${location})`);
}

function lowerKeys(h: Readonly<Record<string, readonly string[]>>): Record<string, readonly string[]> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

function q(s: string): string {
  return JSON.stringify(s);
}

function snippet(reply: Reply): string {
  const body = reply.body.replace(/\s+/g, " ").trim();
  return body ? ` (body: ${body.slice(0, 120)})` : "";
}
