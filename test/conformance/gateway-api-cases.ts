/**
 * The request-case kinds of cases.json. Each returns "" when the case passed, else why not. `http` and
 * `retry` must pass 3 times in a row (upstream's eventual consistency), retried every `retryMs` until the
 * case's deadline; the statistical kinds (`percentageMirror`, `weightedDistribution`) follow the case's
 * `distribution` parameters; `websocket` lives in its own file.
 */
import type { Dial, Reply } from "./gateway-api-client.ts";
import { send } from "./gateway-api-client.ts";
import type { Expected, RequestCase, RequestData } from "./gateway-api-data.ts";
import { capture, checkReply } from "./gateway-api-expect.ts";
import type { EchoFleet } from "./gateway-api-fleet.ts";
import { runWebSocketCase } from "./gateway-api-websocket.ts";

export interface CaseContext {
  readonly dial: Dial;
  readonly fleet: EchoFleet;
  /** How long a case may take to converge. */
  readonly deadlineMs: number;
  /** Pause between failed attempts. */
  readonly retryMs: number;
}

const consecutive = 3;

export async function runCase(c: RequestCase, ctx: CaseContext): Promise<string> {
  switch (c.kind) {
    case "http":
      return eventually(ctx, () => attempt(ctx, c.request, c.expected));
    case "retry":
      return eventually(ctx, () => {
        const id = crypto.randomUUID();
        return attempt(
          ctx,
          withPath(c.request, c.request.path.replaceAll("{uuid}", id)),
          substitute(c.expected, id),
        );
      });
    case "mirror":
      return runMirror(c, ctx);
    case "percentageMirror":
      return runPercentageMirror(c, ctx);
    case "weightedDistribution":
      return runWeighted(c, ctx);
    case "backendHeaderMatchesPod":
      return runBackendHeader(c, ctx);
    case "websocket":
      return runWebSocketCase(c, ctx.dial, ctx.deadlineMs, ctx.retryMs);
    default:
      return `unknown case kind ${(c as { kind: string }).kind}`;
  }
}

/** One request and its problems ("" when it passed). */
async function attempt(ctx: CaseContext, req: RequestData, exp: Expected): Promise<string> {
  try {
    return checkReply(exp, req, await send(ctx.dial, req)).join("; ");
  } catch (err) {
    return `request failed: ${(err as Error).message}`;
  }
}

/** Upstream's AwaitConvergence: `consecutive` passes in a row before the deadline. */
export async function eventually(
  ctx: Pick<CaseContext, "deadlineMs" | "retryMs">,
  once: () => Promise<string>,
): Promise<string> {
  const end = performance.now() + ctx.deadlineMs;
  let streak = 0;
  let last = "";
  let tries = 0;
  while (performance.now() < end || tries === 0) {
    tries++;
    const problem = await once();
    if (problem === "") {
      if (++streak >= consecutive) return "";
      continue;
    }
    streak = 0;
    last = problem;
    await Bun.sleep(ctx.retryMs);
  }
  return `${last} (not ${consecutive} passes in a row within ${ctx.deadlineMs} ms, ${tries} tries)`;
}

function withPath(req: RequestData, path: string): RequestData {
  return { ...req, path };
}

/** `exp` with its backend path's `{uuid}` (or appended request id) filled in. */
function substitute(exp: Expected, id: string, append?: string): Expected {
  if (!exp.backendRequest) return exp;
  const path = append
    ? addQuery(exp.backendRequest.path, append, id)
    : exp.backendRequest.path.replaceAll("{uuid}", id);
  return { ...exp, backendRequest: { ...exp.backendRequest, path } };
}

function addQuery(path: string, name: string, value: string): string {
  return `${path}${path.includes("?") ? "&" : "?"}${name}=${value}`;
}

function podOf(ctx: CaseContext, ref: string) {
  const pod = ctx.fleet.pods.get(ref);
  if (!pod) throw new Error(`no echo pod for ${ref}`);
  return pod;
}

const logLine = (path: string) => `Echoing back request made to ${path} to client`;

async function runMirror(c: RequestCase, ctx: CaseContext): Promise<string> {
  const param = c.requestIdQueryParam ?? "gateway-api-conformance-request-id";
  const id = crypto.randomUUID();
  const path = addQuery(c.request.path, param, id);
  const direct = await eventually(ctx, () =>
    attempt(ctx, withPath(c.request, path), substitute(c.expected, id, param)),
  );
  if (direct) return direct;
  const missing = (c.expected.mirroredTo ?? []).map((m) => m.backend);
  const end = performance.now() + ctx.deadlineMs;
  let left = missing;
  while (left.length) {
    left = left.filter((ref) => !podOf(ctx, ref).logs.some((l) => l.startsWith(logLine(path))));
    if (!left.length || performance.now() > end) break;
    await Bun.sleep(ctx.retryMs);
  }
  return left.length ? `no mirrored request logged by ${left.join(", ")} for ${path}` : "";
}

/** `total` requests, `concurrency` at a time; returns each reply's problems joined ("" = passed). */
async function burst(
  ctx: CaseContext,
  total: number,
  concurrency: number,
  make: (i: number) => { req: RequestData; exp: Expected },
  extra?: (reply: Reply) => string,
): Promise<string[]> {
  const problems: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const { req, exp } = make(next++);
      try {
        const reply = await send(ctx.dial, req);
        const p = [...checkReply(exp, req, reply), ...(extra ? [extra(reply)] : [])].filter(Boolean);
        if (p.length) problems.push(p.join("; "));
      } catch (err) {
        problems.push(`request failed: ${(err as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return problems;
}

async function runPercentageMirror(c: RequestCase, ctx: CaseContext): Promise<string> {
  const d = c.distribution;
  if (!d) return "percentageMirror case without distribution";
  const first = await eventually(ctx, () => attempt(ctx, c.request, c.expected));
  if (first) return first;
  const param = c.requestIdQueryParam ?? "gateway-api-conformance-request-id";
  let last = "";
  for (let a = 0; a < d.maxAttempts; a++) {
    const id = crypto.randomUUID();
    const path = addQuery(c.request.path, param, id);
    const bad = await burst(ctx, d.totalRequests, d.concurrency, () => ({
      req: withPath(c.request, path),
      exp: substitute(c.expected, id, param),
    }));
    if (bad.length) return `${bad.length} of ${d.totalRequests} requests failed, e.g. ${bad[0]}`;
    await Bun.sleep(300); // mirrors are fire-and-forget: let the last ones land
    const off: string[] = [];
    for (const m of c.expected.mirroredTo ?? []) {
      const n = d.totalRequests;
      const p = (m.percent ?? 100) / 100;
      const count = podOf(ctx, m.backend).logs.filter((l) => l.startsWith(logLine(path))).length;
      const spread = (d.toleranceStdDevs ?? 3) * Math.sqrt(n * p * (1 - p));
      if (Math.abs(count - n * p) > spread)
        off.push(`${m.backend} got ${count} mirrored of ${n}, want ${n * p} ± ${spread.toFixed(1)}`);
    }
    if (!off.length) return "";
    last = off.join("; ");
  }
  return `${last} (after ${d.maxAttempts} attempts)`;
}

async function runWeighted(c: RequestCase, ctx: CaseContext): Promise<string> {
  const d = c.distribution;
  if (!d?.expectedWeights) return "weightedDistribution case without expectedWeights";
  const weights = d.expectedWeights;
  let last = "";
  for (let a = 0; a < d.maxAttempts; a++) {
    const seen = new Map<string, number>();
    const bad = await burst(
      ctx,
      d.totalRequests,
      d.concurrency,
      () => {
        // Entropy as upstream: half the requests carry a random X-Jitter so hashing cannot pin one backend.
        const jitter: Record<string, string> =
          Math.random() < 0.5 ? { "X-Jitter": String(Math.floor(Math.random() * 10_000)) } : {};
        return { req: { ...c.request, headers: { ...c.request.headers, ...jitter } }, exp: c.expected };
      },
      (reply) => {
        const backend = capture(reply, c.request.method).pod.split("-").slice(0, -2).join("-");
        seen.set(backend, (seen.get(backend) ?? 0) + 1);
        return "";
      },
    );
    if (bad.length) {
      last = `${bad.length} of ${d.totalRequests} requests failed, e.g. ${bad[0]}`;
    } else {
      const problems: string[] = [];
      const wanted = Object.keys(weights).filter((b) => (weights[b] ?? 0) > 0);
      const unexpected = [...seen.keys()].filter((b) => !wanted.includes(b));
      if (unexpected.length) problems.push(`unexpected backends ${unexpected.join(", ")}`);
      for (const b of wanted) {
        const share = (seen.get(b) ?? 0) / d.totalRequests;
        if (Math.abs(share - (weights[b] ?? 0)) > (d.tolerance ?? 0.05))
          problems.push(
            `${b} got ${(share * 100).toFixed(1)}%, want ${((weights[b] ?? 0) * 100).toFixed(0)}%`,
          );
      }
      if (!problems.length) return "";
      last = problems.join("; ");
    }
    await Bun.sleep(ctx.retryMs);
  }
  return `${last} (after ${d.maxAttempts} attempts)`;
}

async function runBackendHeader(c: RequestCase, ctx: CaseContext): Promise<string> {
  const header = (c.header ?? "Backend").toLowerCase();
  const first = await eventually(ctx, () => attempt(ctx, c.request, c.expected));
  if (first) return first;
  const bad = await burst(
    ctx,
    c.repeat ?? 100,
    10,
    () => ({ req: c.request, exp: c.expected }),
    (reply) => {
      const got = capture(reply, c.request.method);
      const values = Object.entries(got.headers).find(([n]) => n.toLowerCase() === header)?.[1] ?? [];
      if (values.length !== 1) return `want exactly one ${c.header} header, got ${JSON.stringify(values)}`;
      return got.pod.startsWith(values[0] as string) ? "" : `pod ${got.pod} does not start with ${values[0]}`;
    },
  );
  return bad.length ? `${bad.length} of ${c.repeat ?? 100} requests failed, e.g. ${bad[0]}` : "";
}
