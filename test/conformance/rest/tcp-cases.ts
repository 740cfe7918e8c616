/**
 * `tcpEcho`, `tcpEchoSamples` and `tcpWeightedDistribution` (README "Case kinds"): line exchanges with
 * upstream's TCP echo through the Gateway, in the clear or over TLS (SNI `serverName`, roots the `ca.crt`
 * of `trustedCAConfigMap`, TLS 1.2 at least).
 */
import { connect as connectTcp, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import { certificate, deploymentOf, type RestCaseContext, remaining } from "./case-context.ts";
import type { RestCase } from "./data.ts";
import { weightedRounds } from "./weighted.ts";

/** A connection that hands out whole lines; `next` rejects on close, error or timeout. */
interface Lines {
  next(): Promise<string>;
  send(line: string): void;
  close(): void;
}

function open(c: RestCase, ctx: RestCaseContext, timeoutMs: number): Promise<Lines> {
  const t = c.target;
  return new Promise((resolve, reject) => {
    let buffered = "";
    let failure: Error | undefined;
    const waiters: { resolve: (l: string) => void; reject: (e: Error) => void }[] = [];
    const fail = (err: Error) => {
      failure ??= err;
      for (const w of waiters.splice(0)) w.reject(failure);
      reject(failure);
    };
    const ready = () =>
      resolve({
        next: () =>
          new Promise<string>((res, rej) => {
            const nl = buffered.indexOf("\n");
            if (nl >= 0) {
              res(buffered.slice(0, nl + 1));
              buffered = buffered.slice(nl + 1);
            } else if (failure) rej(failure);
            else waiters.push({ resolve: res, reject: rej });
          }),
        send: (line) => socket.write(`${line}\n`),
        close: () => socket.destroy(),
      });
    const socket: Socket = t.tls
      ? connectTls(
          {
            host: ctx.address,
            port: t.port,
            minVersion: "TLSv1.2",
            ...(t.serverName ? { servername: t.serverName } : {}),
            ...(t.trustedCAConfigMap ? { ca: certificate(ctx, t.trustedCAConfigMap).certPem } : {}),
          },
          ready,
        )
      : connectTcp({ host: ctx.address, port: t.port }, ready);
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    socket.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      for (let nl = buffered.indexOf("\n"); nl >= 0 && waiters.length; nl = buffered.indexOf("\n")) {
        waiters.shift()?.resolve(buffered.slice(0, nl + 1));
        buffered = buffered.slice(nl + 1);
      }
    });
    socket.on("error", fail);
    socket.on("close", () => fail(new Error("connection closed (EOF)")));
  });
}

/**
 * One full exchange: welcome, PING, IS_TLS, TEST. A wrong answer is pushed to `problems` as soon as it is
 * read (upstream asserts inside its loop: a wrong value fails even if a later read of the same attempt
 * fails); a read error is thrown, for a retry.
 */
async function exchange(c: RestCase, lines: Lines, problems: string[]): Promise<void> {
  const e = c.expected as Record<string, string | boolean | null>;
  const expectLine = async (want: string, what: string) => {
    const got = await lines.next();
    if (got !== want) problems.push(`${what} ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  };
  await expectLine(String(e.welcome), "welcome");
  lines.send("PING");
  await expectLine(String(e.ping ?? "PONG\n"), "PING answer");
  lines.send("IS_TLS");
  await expectLine(`${e.backendIsTLS}\n`, "IS_TLS (the backend connection is TLS)");
  lines.send("TEST");
  const echo = JSON.parse(await lines.next()) as {
    namespace?: string;
    pod?: string;
    tls?: { serverName?: string };
  };
  if (echo.namespace !== e.namespace) problems.push(`namespace ${echo.namespace}, want ${e.namespace}`);
  if (!echo.pod?.startsWith(`${e.backend}-`))
    problems.push(`answered by pod ${echo.pod}, want ${e.backend}-*`);
  if (e.sni && echo.tls?.serverName !== e.sni)
    problems.push(`backend SNI ${echo.tls?.serverName}, want ${e.sni}`);
}

/** Retried while a read fails; the first exchange that completes is the verdict. */
export async function runTcpEcho(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const end = performance.now() + ctx.deadlineMs;
  let last = "";
  do {
    let lines: Lines | undefined;
    const problems: string[] = [];
    try {
      lines = await open(c, ctx, remaining(end, 10_000));
      await exchange(c, lines, problems);
      return problems.join("; ");
    } catch (err) {
      if (problems.length) return problems.join("; ");
      last = (err as Error).message;
    } finally {
      lines?.close();
    }
    await Bun.sleep(ctx.retryMs);
  } while (performance.now() < end);
  return `no complete exchange within ${ctx.deadlineMs} ms (last: ${last})`;
}

/** Welcome, then TEST: the pod that answered. */
async function samplePod(c: RestCase, ctx: RestCaseContext, timeoutMs: number): Promise<string> {
  const lines = await open(c, ctx, timeoutMs);
  try {
    await lines.next();
    lines.send("TEST");
    const pod = (JSON.parse(await lines.next()) as { pod?: string }).pod;
    if (!pod) throw new Error("TEST answer without a pod");
    return pod;
  } finally {
    lines.close();
  }
}

export async function runTcpSamples(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const e = c.expected as {
    samples: number;
    perRequestTimeoutSeconds: number;
    podPrefix: string;
    forbiddenPodPrefix?: string;
  };
  for (let i = 0; i < e.samples; i++) {
    let pod: string;
    try {
      pod = await samplePod(c, ctx, e.perRequestTimeoutSeconds * 1000);
    } catch (err) {
      return `sample ${i + 1}: ${(err as Error).message}`;
    }
    if (!pod.startsWith(e.podPrefix) || (e.forbiddenPodPrefix && pod.startsWith(e.forbiddenPodPrefix)))
      return `sample ${i + 1} answered by ${pod}, want ${e.podPrefix}*`;
  }
  return "";
}

/** Precondition: a TCP connection opens; then weighted rounds of TEST exchanges. */
export async function runTcpWeighted(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const end = performance.now() + ctx.deadlineMs;
  for (;;) {
    const opened = await new Promise<string>((resolve) => {
      const s = connectTcp({ host: ctx.address, port: c.target.port }, () => {
        s.destroy();
        resolve("");
      });
      s.on("error", (err) => resolve(err.message));
    });
    if (!opened) break;
    if (performance.now() > end)
      return `precondition: no TCP connection within ${ctx.deadlineMs} ms (${opened})`;
    await Bun.sleep(100);
  }
  return weightedRounds(c, async () => deploymentOf(await samplePod(c, ctx, 10_000)));
}
