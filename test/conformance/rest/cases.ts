/**
 * The request-case kinds of `gateway-api-rest`, each with the `expected` fields it checks. A kind the
 * harness does not know, or an expected field it would not check, fails the case: the data's README asks
 * that nothing pass silently. Each returns "" when the case passed, else why not.
 */
import { type RestCaseContext, unknownFields } from "./case-context.ts";
import type { RestCase } from "./data.ts";
import { runGrpcCase, runGrpcWeighted } from "./grpc-cases.ts";
import { runHttpCase, runHttpFailure, runTlsConnectionRejected, runTlsRequestFailure } from "./http-cases.ts";
import { runTcpEcho, runTcpSamples, runTcpWeighted } from "./tcp-cases.ts";
import { runDnsQuery, runUdpEcho, runUdpSamples, runUdpWeighted } from "./udp-cases.ts";

type Runner = (c: RestCase, ctx: RestCaseContext) => Promise<string>;

const grpcExpected = ["code", "codeName", "backend", "namespace", "fullyQualifiedMethod", "responseMetadata"];

/** Kind → its runner and the `expected` fields it checks (or, where upstream does not, knowingly skips). */
const kinds: Record<string, { run: Runner; expected: readonly string[] }> = {
  http: {
    run: runHttpCase,
    expected: [
      "statusCodes",
      "backend",
      "namespace",
      "backendRequest",
      "clientCertificateRequested",
      "responseHeaders",
      "responseHeadersOneOf",
      "responseAbsentHeaders",
      "ignoreWhitespaceInResponseHeaderValues",
      "redirect",
    ],
  },
  httpFailure: {
    run: runHttpFailure,
    expected: ["requiredConsecutiveFailures", "failIfStatus", "ignoredStatusCodes", "namespace"],
  },
  tlsRequestFailure: {
    run: runTlsRequestFailure,
    expected: ["transportError", "namespace", "clientCertificateRequested"],
  },
  tlsConnectionRejected: { run: runTlsConnectionRejected, expected: ["connectionRejected"] },
  grpc: { run: runGrpcCase, expected: grpcExpected },
  grpcWeightedDistribution: { run: runGrpcWeighted, expected: grpcExpected },
  tcpEcho: {
    run: runTcpEcho,
    expected: ["welcome", "ping", "backendIsTLS", "backend", "namespace", "sni"],
  },
  tcpEchoSamples: {
    run: runTcpSamples,
    expected: ["samples", "perRequestTimeoutSeconds", "podPrefix", "forbiddenPodPrefix"],
  },
  // The namespace is not asserted here: upstream's EchoSendOnce reads only the pod (README, quirks).
  tcpWeightedDistribution: { run: runTcpWeighted, expected: ["namespace"] },
  udpEcho: { run: runUdpEcho, expected: ["service", "namespace"] },
  udpEchoSamples: {
    run: runUdpSamples,
    expected: ["probesPerRound", "probeTimeoutSeconds", "pollIntervalSeconds", "timeoutSeconds", "backend"],
  },
  udpWeightedDistribution: { run: runUdpWeighted, expected: ["namespace"] },
  dnsQuery: { run: runDnsQuery, expected: ["anyResponse"] },
};

/** backendRequest fields `http` checks (the first file's, plus the TLS facts the echo reports). */
const backendRequestFields = [
  "method",
  "host",
  "path",
  "headers",
  "absentHeaders",
  "derivedFromRequest",
  "sni",
  "clientCertificatePemFrom",
];

/** Kinds whose samples must not share the gateway with other cases (their counts would skew). */
export const statisticalKinds: ReadonlySet<string> = new Set([
  "grpcWeightedDistribution",
  "tcpWeightedDistribution",
  "udpWeightedDistribution",
  "tcpEchoSamples",
  "udpEchoSamples",
]);

/** The transports each family of kinds speaks; another one in the data would be sent the wrong way. */
function unknownTransport(c: RestCase): string {
  const t = c.target as RestCase["target"] & { transport?: string };
  const allowed: readonly (string | undefined)[] = c.kind.startsWith("grpc")
    ? ["GRPC_H2C"]
    : ["http", "httpFailure", "tlsRequestFailure"].includes(c.kind)
      ? ["HTTP", "HTTPS"]
      : [undefined];
  if (!allowed.includes(t.protocol))
    return `target.protocol ${t.protocol} is not spoken by ${c.kind} cases here`;
  if (t.transport !== undefined && !(c.kind === "dnsQuery" && t.transport === "udp"))
    return `target.transport ${t.transport} is not spoken by ${c.kind} cases here`;
  return "";
}

export async function runRestCase(c: RestCase, ctx: RestCaseContext): Promise<string> {
  const kind = kinds[c.kind];
  if (!kind) return `unknown case kind ${c.kind}: not run, so not passed`;
  const transport = unknownTransport(c);
  if (transport) return transport;
  const unknown =
    unknownFields(c.expected, kind.expected, "expected") ||
    unknownFields(
      (c.expected.backendRequest as object | undefined) ?? {},
      backendRequestFields,
      "expected.backendRequest",
    );
  if (unknown) return unknown;
  try {
    return await kind.run(c, ctx);
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}
