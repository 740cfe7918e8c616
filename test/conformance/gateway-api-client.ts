/**
 * The conformance client: one request per fresh connection (keep-alive off, as upstream), to a Gateway's
 * address on the case's port, over HTTP/1.1, HTTPS (SNI = serverName), H2 (TLS + ALPN) or cleartext h2c
 * with prior knowledge. Host and `X-Echo-Set-Header` are sent as the README says.
 */
import { connect as connectH2, type IncomingHttpHeaders } from "node:http2";
import type { PeerCertificate } from "node:tls";
import { rawRequest } from "../helpers/raw-http.ts";
import type { RequestData, Target } from "./gateway-api-data.ts";

export interface Reply {
  readonly status: number;
  /** Lower-case name → every value, in order (repeated lines stay separate, as in Go's http.Header). */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly body: string;
  /** The URL the request was for (redirect Locations resolve against it). */
  readonly url: string;
}

export interface Dial {
  /** The Gateway's address (from its status). */
  readonly address: string;
  readonly target: Target;
  /** PEM of the certificate the client trusts (HTTPS/H2). */
  readonly ca?: string;
  readonly timeoutMs: number;
}

/** The Host a request carries: verbatim, or the dialed address with `:port` unless 80/443. */
export function hostHeader(dial: Dial, host: string | null): string {
  if (host !== null) return host;
  const { port, scheme } = dial.target;
  const defaultPort = scheme === "https" ? 443 : 80;
  return port === defaultPort ? dial.address : `${dial.address}:${port}`;
}

/** Send `req` (path possibly rewritten by the caller), following redirects unless `unfollowRedirect`. */
export async function send(dial: Dial, req: RequestData, path = req.path): Promise<Reply> {
  let host = hostHeader(dial, req.host);
  let method = req.method;
  let target = path;
  let port = dial.target.port;
  for (let hop = 0; ; hop++) {
    const reply = await sendOnce(dial, port, method, host, target, req);
    const location = reply.headers.location?.[0];
    if (req.unfollowRedirect || !location || ![301, 302, 303, 307, 308].includes(reply.status)) return reply;
    if (hop === 9) throw new Error("stopped after 10 redirects");
    // Go's client follows on the same Gateway: every host the suite redirects to is served by it.
    const next = new URL(location, reply.url);
    if (next.protocol !== `${dial.target.scheme}:`) return reply;
    host = next.host;
    target = next.pathname + next.search;
    port = Number(next.port) || (next.protocol === "https:" ? 443 : 80);
    if (reply.status === 303 || ((reply.status === 301 || reply.status === 302) && method === "POST"))
      method = "GET";
  }
}

function requestHeaders(req: RequestData, host: string): [string, string][] {
  const echoSet = Object.entries(req.backendSetResponseHeaders ?? {})
    .map(([n, v]) => `${n}:${v}`)
    .join(",");
  return [
    ["Host", host],
    ["User-Agent", "Go-http-client/1.1"],
    ...Object.entries(req.headers),
    ["X-Echo-Set-Header", echoSet],
  ];
}

async function sendOnce(
  dial: Dial,
  port: number,
  method: string,
  host: string,
  target: string,
  req: RequestData,
): Promise<Reply> {
  const { scheme, protocol, serverName } = dial.target;
  const url = `${scheme}://${host}${target}`;
  const headers = requestHeaders(req, host);
  if (protocol === "H2" || protocol === "H2C_PRIOR_KNOWLEDGE")
    return { ...(await sendH2(dial, port, method, headers, target)), url };
  const res = await rawRequest({
    host: dial.address,
    port,
    method,
    target,
    headers,
    timeoutMs: dial.timeoutMs,
    ...(scheme === "https"
      ? {
          tls: {
            ...(serverName ? { servername: serverName } : {}),
            ...(dial.ca ? { ca: dial.ca } : {}),
            checkServerIdentity: goServerIdentity,
          },
        }
      : {}),
  });
  const grouped: Record<string, string[]> = {};
  for (const [n, v] of res.headerList) grouped[n.toLowerCase()] = [...(grouped[n.toLowerCase()] ?? []), v];
  return { status: res.status, headers: grouped, body: res.body, url };
}

/** One HTTP/2 request on its own session (TLS with ALPN h2, or cleartext prior knowledge). */
function sendH2(
  dial: Dial,
  port: number,
  method: string,
  headers: readonly [string, string][],
  target: string,
): Promise<Omit<Reply, "url">> {
  const tls = dial.target.scheme === "https";
  const authority = headers.find(([n]) => n === "Host")?.[1] ?? dial.address;
  const session = connectH2(`${tls ? "https" : "http"}://${dial.address}:${port}`, {
    ...(tls && dial.target.serverName ? { servername: dial.target.serverName } : {}),
    ...(tls ? (dial.ca ? { ca: dial.ca } : { rejectUnauthorized: false }) : {}),
    ...(tls ? { checkServerIdentity: goServerIdentity } : {}),
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      session.destroy();
      reject(new Error("h2 request timed out"));
    }, dial.timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      session.destroy();
      reject(err);
    };
    session.on("error", fail);
    const h2Headers: Record<string, string> = { ":method": method, ":path": target, ":authority": authority };
    for (const [n, v] of headers) if (n !== "Host") h2Headers[n.toLowerCase()] = v;
    const stream = session.request(h2Headers, { endStream: true });
    let head: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      head = h;
    });
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", fail);
    stream.on("end", () => {
      clearTimeout(timer);
      session.close();
      const grouped: Record<string, string[]> = {};
      for (const [n, v] of Object.entries(head))
        if (!n.startsWith(":") && v !== undefined) grouped[n] = [v].flat().map(String);
      resolve({ status: Number(head[":status"]), headers: grouped, body: Buffer.concat(chunks).toString() });
    });
  });
}

/**
 * Go's `VerifyHostname` for DNS names, which upstream's client uses: a SAN matches exactly (ignoring case
 * and a trailing dot) or as a wildcard whose `*` stands for exactly the first label. Unlike Node's check it
 * accepts `*.org` for `example.org`, which the suite's certificate relies on.
 */
export function goServerIdentity(host: string, cert: PeerCertificate): Error | undefined {
  const name = host.toLowerCase().replace(/\.$/, "");
  const sans = (cert.subjectaltname ?? "")
    .split(", ")
    .filter((s) => s.startsWith("DNS:"))
    .map((s) => s.slice(4).toLowerCase().replace(/\.$/, ""));
  const matches = (pattern: string) => {
    if (pattern === name) return true;
    if (!pattern.startsWith("*.")) return false;
    const labels = name.split(".");
    return labels.length > 1 && labels.slice(1).join(".") === pattern.slice(2) && labels[0] !== "";
  };
  return sans.some(matches)
    ? undefined
    : new Error(`certificate is valid for ${sans.join(", ")}, not ${host}`);
}
