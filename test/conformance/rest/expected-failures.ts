/**
 * The `gateway-api-rest` tests Gatehouse does not pass yet, each with the issue that will make it pass. The
 * entries name tests, not cases (verdicts.ts): a listed test that passes fails the run until it is removed,
 * a test that fails unlisted fails it too, so the list can only shrink honestly.
 */
import type { Front } from "../../helpers/fronts.ts";

export interface RestExpectedFailure {
  readonly test: string;
  /** The issue whose work makes it pass (`issues show N`). */
  readonly issue: number;
  readonly reason: string;
  /** Only on this front; absent: both. */
  readonly front?: Front;
}

export function restExpectedFor(
  xfails: readonly RestExpectedFailure[],
  test: string,
  front: Front,
): RestExpectedFailure | undefined {
  return xfails.find((x) => x.test === test && (x.front === undefined || x.front === front));
}

const x = (issue: number, test: string, reason: string): RestExpectedFailure => ({ test, issue, reason });

/**
 * Issues: 26 upstream protocols (GRPCRoute; BackendTLSPolicy and backend client certificates pass), 27
 * TCPRoute, UDPRoute, TLS termination for TLSRoute, ListenerSet, remaining Gateway.
 */
export const restExpectedFailures: readonly RestExpectedFailure[] = [
  // issue 26
  ...[
    "GRPCExactMethodMatching",
    "GRPCRouteHeaderMatching",
    "GRPCRouteListenerHostnameMatching",
    "GRPCRouteNamedRule",
    "GRPCRouteWeight",
  ].map(
    (test): RestExpectedFailure => ({
      ...x(
        26,
        test,
        "--front bun serves h2c with Bun.serve's HTTP/2, which sends no trailers: a call the backend answers gets no grpc-status (INTERNAL); docs/http.md",
      ),
      front: "bun",
    }),
  ),
  // issue 27
  x(
    27,
    "GatewayInfrastructure",
    "spec.infrastructure labels and annotations are not propagated to anything that can be read in folder mode",
  ),
];
