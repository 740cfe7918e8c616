/**
 * upstream's weight check (`conformance/utils/weight`), shared by gRPC, TCP and UDP: rounds of
 * `totalRequests` samples, `concurrency` at a time, each naming the backend that answered; a round passes
 * when no sample failed, the backends seen are exactly those with a weight above 0, and every share is
 * within `tolerance` of its weight. Up to `maxAttempts` rounds.
 */
import type { RestCase } from "./data.ts";

/** One sample: the backend (deployment) that answered, or a thrown error. */
export type Sample = () => Promise<string>;

export async function weightedRounds(c: RestCase, sample: Sample): Promise<string> {
  const d = c.distribution;
  if (!d?.expectedWeights) return `${c.kind} case without distribution.expectedWeights`;
  const weights = d.expectedWeights;
  let last = "";
  for (let attempt = 0; attempt < d.maxAttempts; attempt++) {
    const seen = new Map<string, number>();
    const errors: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < d.totalRequests) {
        next++;
        try {
          const backend = await sample();
          seen.set(backend, (seen.get(backend) ?? 0) + 1);
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
    };
    await Promise.all(Array.from({ length: d.concurrency }, worker));
    if (errors.length) {
      last = `${errors.length} of ${d.totalRequests} samples failed, e.g. ${errors[0]}`;
      continue;
    }
    const problems: string[] = [];
    const wanted = Object.keys(weights).filter((b) => (weights[b] ?? 0) > 0);
    const unexpected = [...seen.keys()].filter((b) => !wanted.includes(b));
    if (unexpected.length) problems.push(`unexpected backends ${unexpected.join(", ")}`);
    for (const b of wanted) {
      const share = (seen.get(b) ?? 0) / d.totalRequests;
      if (Math.abs(share - (weights[b] ?? 0)) > (d.tolerance ?? 0.05))
        problems.push(`${b} got ${(share * 100).toFixed(1)}%, want ${((weights[b] ?? 0) * 100).toFixed(0)}%`);
    }
    if (!problems.length) return "";
    last = problems.join("; ");
  }
  return `${last} (after ${d.maxAttempts} rounds)`;
}
