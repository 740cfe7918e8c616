/**
 * `grpc-timeout` (gRPC over HTTP/2, "Requests"): the time the client gives its call, as 1 to 8 digits and a
 * unit (H hours, M minutes, S seconds, m milliseconds, u microseconds, n nanoseconds). The gateway waits
 * no longer than that for the backend's answer: past it, the call ends DEADLINE_EXCEEDED from the gateway
 * (a 504, status.ts), and the backend's stream is cancelled, as the client has given up anyway.
 */
const unitMs: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/** The timeout in ms (at least 1 ms: a 0 or sub-millisecond timeout is already over), or undefined when
 * the value is absent or malformed (then ignored, as gRPC servers do). */
export function grpcTimeoutMs(value: string | null): number | undefined {
  if (value === null || !/^\d{1,8}[HMSmun]$/.test(value)) return undefined;
  const ms = Number(value.slice(0, -1)) * (unitMs[value.at(-1) as string] as number);
  return Math.max(1, Math.ceil(ms));
}
