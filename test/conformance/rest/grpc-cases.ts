/**
 * `grpc` and `grpcWeightedDistribution` (README "Case kinds"): unary calls of upstream's GrpcEcho with
 * @grpc/grpc-js over h2c with prior knowledge, to the Gateway's address. One channel per case, reused for
 * every attempt and redialed after an Internal answer; `:authority` is the case's or grpc's default (the
 * dialed address:port). Response metadata is not checked, as upstream does not.
 */
import * as grpc from "@grpc/grpc-js";
import { type EchoResponse, type GrpcEchoClient, grpcEcho } from "../../helpers/grpc-echo-server.ts";
import { eventually } from "../gateway-api-cases.ts";
import { deploymentOf, type RestCaseContext } from "./case-context.ts";
import type { RestCase } from "./data.ts";
import { weightedRounds } from "./weighted.ts";

interface GrpcRequest {
  readonly method: string;
  readonly authority: string | null;
  readonly metadata: Readonly<Record<string, string>>;
}
interface GrpcExpected {
  readonly code: number;
  readonly backend: string | null;
  readonly namespace: string | null;
  readonly fullyQualifiedMethod: string;
  readonly responseMetadata: unknown;
}

function dial(c: RestCase, ctx: RestCaseContext): GrpcEchoClient {
  const req = c.request as unknown as GrpcRequest;
  const { Client } = grpcEcho();
  return new Client(`${ctx.address}:${c.target.port}`, grpc.credentials.createInsecure(), {
    ...(req.authority !== null ? { "grpc.default_authority": req.authority } : {}),
  });
}

function call(client: GrpcEchoClient, c: RestCase, timeoutMs: number, extra: Record<string, string> = {}) {
  const req = c.request as unknown as GrpcRequest;
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries({ ...req.metadata, ...extra })) md.add(k, v);
  const fn = client[req.method];
  if (!fn) throw new Error(`GrpcEcho has no method ${req.method}`);
  return new Promise<{ code: number; details: string; res?: EchoResponse }>((resolve) => {
    fn.call(client, {}, md, { deadline: Date.now() + timeoutMs }, (err, res) =>
      resolve({ code: err?.code ?? 0, details: err?.details ?? "", ...(res ? { res } : {}) }),
    );
  });
}

/** What is wrong with one answer against `exp` ("" when it matches). */
function check(exp: GrpcExpected, got: { code: number; details: string; res?: EchoResponse }): string {
  if (got.code !== exp.code) return `gRPC code ${got.code} (${got.details}), want ${exp.code}`;
  if (exp.code !== 0) return "";
  const a = got.res?.assertions;
  if (a?.fully_qualified_method !== exp.fullyQualifiedMethod)
    return `method ${a?.fully_qualified_method}, want ${exp.fullyQualifiedMethod}`;
  if (exp.namespace !== null && a?.context?.namespace !== exp.namespace)
    return `namespace ${a?.context?.namespace}, want ${exp.namespace}`;
  if (exp.backend !== null && !a?.context?.pod.startsWith(exp.backend))
    return `answered by pod ${a?.context?.pod}, want ${exp.backend}-*`;
  return "";
}

export async function runGrpcCase(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const exp = c.expected as unknown as GrpcExpected;
  if (exp.responseMetadata !== null)
    return "expected.responseMetadata is set: response metadata is not checked";
  let client = dial(c, ctx);
  const started = performance.now();
  try {
    return await eventually(ctx, async () => {
      // Upstream: 30 s minus the time spent; here the case's own deadline bounds it too.
      const budget = Math.min(30_000, ctx.deadlineMs) - (performance.now() - started);
      const got = await call(client, c, Math.max(250, budget));
      if (got.code === grpc.status.INTERNAL) {
        client.close();
        client = dial(c, ctx);
      }
      return check(exp, got);
    });
  } finally {
    client.close();
  }
}

/** The case itself first (upstream's precondition), then rounds of RPCs, each on a fresh channel. */
export async function runGrpcWeighted(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const first = await runGrpcCase(c, ctx);
  if (first) return `precondition: ${first}`;
  return weightedRounds(c, async () => {
    const client = dial(c, ctx);
    try {
      // Entropy as upstream: half the RPCs carry a random x-jitter, so hashing cannot pin one backend.
      const jitter: Record<string, string> =
        Math.random() < 0.5 ? { "x-jitter": String(Math.floor(Math.random() * 10_000)) } : {};
      const got = await call(client, c, 30_000, jitter);
      if (got.code !== 0) throw new Error(`gRPC code ${got.code} (${got.details})`);
      return deploymentOf(got.res?.assertions?.context?.pod ?? "");
    } finally {
      client.close();
    }
  });
}
