/**
 * The HTTP-over-TLS side of the rest data: `http` cases with its additions (a client certificate, the SNI
 * and client certificate the gateway sent to a TLS backend, `clientCertificateRequested`), `httpFailure`,
 * `tlsRequestFailure` and `tlsConnectionRejected` (README "Case kinds"). Each returns "" when it passed.
 */

import { eventually } from "../gateway-api-cases.ts";
import { type Reply, send } from "../gateway-api-client.ts";
import type { Expected } from "../gateway-api-data.ts";
import { checkReply } from "../gateway-api-expect.ts";
import { certificate, type RestCaseContext, remaining } from "./case-context.ts";
import type { RestCase } from "./data.ts";
import { clientCertificateRequested, type TlsDial, tlsHandshake, tlsHttpRequest } from "./tls-client.ts";

interface BackendTls {
  readonly sni?: string;
  readonly clientCertificatePemFrom?: string;
}

function tlsDial(c: RestCase, ctx: RestCaseContext, timeoutMs = 10_000): TlsDial {
  const t = c.target;
  return {
    address: ctx.address,
    port: t.port,
    timeoutMs,
    ...(t.serverName ? { serverName: t.serverName } : {}),
    ...(t.trustedServerCertificate ? { ca: certificate(ctx, t.trustedServerCertificate).certPem } : {}),
    ...(t.clientCertificate ? { clientCert: certificate(ctx, t.clientCertificate) } : {}),
  };
}

/** The request as the first file's client sends it (Host, User-Agent, headers, X-Echo-Set-Header). */
async function request(c: RestCase, ctx: RestCaseContext): Promise<Reply> {
  const t = c.target;
  // HTTPS goes through tls-client.ts: a client certificate, and trust in a leaf as Go gives it.
  if (t.scheme !== "https") return send({ address: ctx.address, target: t, timeoutMs: 10_000 }, c.request);
  const defaultPort = t.scheme === "https" ? 443 : 80;
  const host = c.request.host ?? (t.port === defaultPort ? ctx.address : `${ctx.address}:${t.port}`);
  const echoSet = Object.entries(c.request.backendSetResponseHeaders ?? {}).map(([n, v]) => `${n}:${v}`);
  return tlsHttpRequest(tlsDial(c, ctx), c.request.method, c.request.path, [
    ["Host", host],
    ["User-Agent", "Go-http-client/1.1"],
    ...Object.entries(c.request.headers),
    ["X-Echo-Set-Header", echoSet.join(",")],
  ]);
}

/** The backend-side TLS facts the echo reported: the SNI the gateway sent, the certificate it presented. */
function checkBackendTls(want: BackendTls, ctx: RestCaseContext, reply: Reply): string[] {
  if (want.sni === undefined && want.clientCertificatePemFrom === undefined) return [];
  let tls: { serverName?: string; peerCertificates?: string[] } | undefined;
  try {
    tls = (JSON.parse(reply.body) as { tls?: typeof tls }).tls;
  } catch {}
  if (!tls) return ["the backend saw no TLS (the echo reported no tls object)"];
  const problems: string[] = [];
  if (want.sni !== undefined && tls.serverName !== want.sni)
    problems.push(`backend SNI ${JSON.stringify(tls.serverName)}, want ${JSON.stringify(want.sni)}`);
  if (want.clientCertificatePemFrom !== undefined) {
    const pem = certificate(ctx, want.clientCertificatePemFrom).certPem;
    if (!(tls.peerCertificates ?? []).includes(pem))
      problems.push(`the gateway did not present ${want.clientCertificatePemFrom} to the backend`);
  }
  return problems;
}

export async function runHttpCase(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const exp = c.expected as unknown as Expected & { backendRequest?: BackendTls };
  const problem = await eventually(ctx, async () => {
    try {
      const reply = await request(c, ctx);
      const problems = checkReply(exp, c.request, reply);
      if (!problems.length && reply.status === 200)
        problems.push(...checkBackendTls(exp.backendRequest ?? {}, ctx, reply));
      return problems.join("; ");
    } catch (err) {
      return `request failed: ${(err as Error).message}`;
    }
  });
  if (problem || c.expected.clientCertificateRequested !== true) return problem;
  return (await clientCertificateRequested(tlsDial(c, ctx)))
    ? ""
    : "the server never asked for a client certificate";
}

/** MakeRequestAndExpectFailure: `requiredConsecutiveFailures` failure answers in a row; a 200 fails at once. */
export async function runHttpFailure(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const need = Number(c.expected.requiredConsecutiveFailures ?? 5);
  const ignored = (c.expected.ignoredStatusCodes as number[] | undefined) ?? [408, 504];
  const failIf = Number(c.expected.failIfStatus ?? 200);
  const end = performance.now() + ctx.deadlineMs;
  let streak = 0;
  let last = "";
  do {
    try {
      const reply = await request(c, ctx);
      if (reply.status === failIf) return `got ${reply.status}: the request reached a backend`;
      if (ignored.includes(reply.status)) {
        streak = 0;
        last = `status ${reply.status} (not counted)`;
      } else if (++streak >= need) return "";
    } catch (err) {
      streak = 0;
      last = `transport error: ${(err as Error).message}`;
      await Bun.sleep(ctx.retryMs);
    }
  } while (performance.now() < end);
  return `not ${need} failure answers in a row within ${ctx.deadlineMs} ms (last: ${last || `${streak} in a row`})`;
}

/** MakeTLSRequestAndExpectFailureResponse: one request, which must end in a transport error. */
export async function runTlsRequestFailure(c: RestCase, ctx: RestCaseContext): Promise<string> {
  try {
    const reply = await request(c, ctx);
    return `got an HTTP answer (${reply.status}), want a transport error`;
  } catch {
    if (c.expected.clientCertificateRequested !== true) return "";
    return (await clientCertificateRequested(tlsDial(c, ctx)))
      ? ""
      : "transport error, but the server never asked for a client certificate";
  }
}

/** Handshakes until one is rejected (EOF, reset); completed or certificate-refused ones are retried. */
export async function runTlsConnectionRejected(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const end = performance.now() + ctx.deadlineMs;
  let last = "";
  do {
    // The data's target has no trusted certificate here: the system roots, as upstream's probe uses.
    const { end: how, detail } = await tlsHandshake(tlsDial(c, ctx, remaining(end, 10_000)));
    if (how === "rejected") return "";
    last = `${how}: ${detail}`;
    await Bun.sleep(ctx.retryMs);
  } while (performance.now() < end);
  return `the connection was never rejected within ${ctx.deadlineMs} ms (last: ${last})`;
}
