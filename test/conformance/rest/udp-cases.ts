/**
 * `udpEcho`, `udpEchoSamples`, `udpWeightedDistribution` and `dnsQuery` (README "Case kinds"): datagrams
 * through the Gateway's UDP listeners, each probe from a fresh socket with a 2 s deadline, as upstream's.
 */
import { queryDns } from "../../helpers/dns-responder.ts";
import { udpExchange } from "../../helpers/udp-echo-server.ts";
import { deploymentOf, type RestCaseContext, remaining } from "./case-context.ts";
import type { RestCase } from "./data.ts";
import { weightedRounds } from "./weighted.ts";

const probeMs = 2000;

interface UdpEcho {
  request?: string;
  namespace?: string;
  service?: string;
  pod?: string;
}

async function probe(
  c: RestCase,
  ctx: RestCaseContext,
  payload: string,
  timeoutMs: number,
): Promise<UdpEcho> {
  const reply = await udpExchange(ctx.address, c.target.port, payload, timeoutMs);
  try {
    return JSON.parse(reply.toString("utf8")) as UdpEcho;
  } catch {
    throw new Error(`the reply is not the echo's JSON: ${reply.toString("utf8").slice(0, 80)}`);
  }
}

/** Every retry until the deadline; null service and namespace accept any reply. */
export async function runUdpEcho(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const e = c.expected as { service: string | null; namespace: string | null };
  const payload = String(c.request.payload ?? "");
  const end = performance.now() + ctx.deadlineMs;
  let last = "";
  do {
    try {
      if (e.service === null && e.namespace === null) {
        await udpExchange(ctx.address, c.target.port, payload, remaining(end, probeMs));
        return "";
      }
      const echo = await probe(c, ctx, payload, remaining(end, probeMs));
      const wrong = [
        e.service !== null && echo.service !== e.service ? `service ${echo.service}, want ${e.service}` : "",
        e.namespace !== null && echo.namespace !== e.namespace
          ? `namespace ${echo.namespace}, want ${e.namespace}`
          : "",
      ].filter(Boolean);
      if (!wrong.length) return "";
      last = wrong.join("; ");
    } catch (err) {
      last = (err as Error).message;
    }
    await Bun.sleep(ctx.retryMs);
  } while (performance.now() < end);
  return `no matching UDP reply within ${ctx.deadlineMs} ms (last: ${last})`;
}

/** Rounds of probes until one is clean; a probe error retries the round, a wrong backend fails at once. */
export async function runUdpSamples(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const e = c.expected as { probesPerRound: number; backend: string };
  const payload = String(c.request.payload ?? "");
  const end = performance.now() + ctx.deadlineMs;
  let last = "";
  do {
    try {
      for (let i = 0; i < e.probesPerRound; i++) {
        const echo = await probe(c, ctx, payload, probeMs);
        const backend = deploymentOf(echo.pod ?? "");
        if (backend !== e.backend) return `probe ${i + 1} answered by ${echo.pod}, want ${e.backend}`;
      }
      return "";
    } catch (err) {
      last = (err as Error).message;
    }
    await Bun.sleep(ctx.retryMs);
  } while (performance.now() < end);
  return `no clean round of ${e.probesPerRound} probes within ${ctx.deadlineMs} ms (last: ${last})`;
}

/** Precondition: one echo round trip (any reply); then weighted rounds. */
export async function runUdpWeighted(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const pre = await runUdpEcho(
    {
      ...c,
      request: { ...c.request, payload: "gateway-api-conformance-udp-echo" },
      expected: { service: null, namespace: null },
    },
    ctx,
  );
  if (pre) return `precondition: ${pre}`;
  const payload = String(c.request.payload ?? "");
  return weightedRounds(c, async () => {
    const pod = (await probe(c, ctx, payload, probeMs)).pod;
    if (!pod) throw new Error("a reply without a pod");
    return deploymentOf(pod);
  });
}

/** A DNS query every retry until the deadline; any reply passes. */
export async function runDnsQuery(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const end = performance.now() + ctx.deadlineMs;
  let last = "";
  do {
    try {
      await queryDns(
        ctx.address,
        c.target.port,
        String(c.request.question),
        String(c.request.type),
        remaining(end, probeMs),
      );
      return "";
    } catch (err) {
      last = (err as Error).message;
    }
    await Bun.sleep(ctx.retryMs);
  } while (performance.now() < end);
  return `no DNS reply within ${ctx.deadlineMs} ms (last: ${last})`;
}
