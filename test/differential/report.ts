/**
 * The differential run as text: every probe where a pair of targets disagrees, with what each target
 * answered and what reached its backends, then a count per verdict and pair. Known differences
 * (known-differences.ts) are marked with their reason; a dangerous one that is not known is marked
 * UNEXPLAINED, as is a known one that no longer happens.
 */
import type { Received } from "./backend.ts";
import { KNOWN_DIFFERENCES } from "./known-differences.ts";
import {
  compare,
  type Outcome,
  PAIRS,
  type Pair,
  type ProbeResult,
  pairName,
  type Verdict,
  verdictText,
} from "./run.ts";
import { TARGETS } from "./targets.ts";

export interface Finding {
  readonly probe: string;
  readonly pair: Pair;
  readonly verdict: Verdict;
  /** The known-differences entry that explains it (dangerous verdicts only). */
  readonly reason?: string;
}

/** Every pair's verdict on every probe. */
export function findings(results: readonly ProbeResult[]): Finding[] {
  return results.flatMap(({ probe, outcomes }) =>
    PAIRS.map((pair) => {
      const verdict = compare(outcomes[pair[0]], outcomes[pair[1]]);
      const name = pairName(pair);
      const known = KNOWN_DIFFERENCES.find((k) => k.probe === probe.name && k.pairs.includes(name));
      return {
        probe: probe.name,
        pair: name,
        verdict,
        ...(known && verdict === "DIFFERENT BACKEND/PATH" ? { reason: known.reason } : {}),
      };
    }),
  );
}

/** Dangerous verdicts with no known-differences entry, and entries that no longer match a difference. */
export function unexplained(all: readonly Finding[]): { dangerous: Finding[]; stale: string[] } {
  const dangerous = all.filter((f) => f.verdict === "DIFFERENT BACKEND/PATH" && f.reason === undefined);
  // Entries for probes not run (a `--only` run) say nothing either way.
  const ran = new Set(all.map((f) => f.probe));
  const stale = KNOWN_DIFFERENCES.filter((k) => !k.intermittent && ran.has(k.probe)).flatMap((k) =>
    k.pairs
      .filter(
        (pair) =>
          !all.some((f) => f.probe === k.probe && f.pair === pair && f.verdict === "DIFFERENT BACKEND/PATH"),
      )
      .map((pair) => `${k.probe} (${pair})`),
  );
  return { dangerous, stale };
}

/** One target's outcome on one line: answers, then where the requests went. */
export function describeOutcome(o: Outcome): string {
  const answers = o.answers.map((a) => (a.origin === "proxy" ? `${a.status}` : `${a.status}:${a.origin}`));
  const head = `${answers.length === 0 ? "no answer" : answers.join(" ")}${o.closed ? ", closed" : ", left open"}`;
  const line = (f: Received) =>
    JSON.stringify(f.requestLine.length > 100 ? `${f.requestLine.slice(0, 100)}…` : f.requestLine);
  const sent = o.forwarded.map((f) => `${f.backend} ← ${line(f)} host=${f.host}`);
  return sent.length === 0 ? head : `${head}; ${sent.join("; ")}`;
}

/** Answers in short: statuses, each with whose answer it was when not the target's own. */
function short(o: Outcome): string {
  const answers = o.answers.map((a) => (a.origin === "proxy" ? `${a.status}` : `${a.status} ${a.origin}`));
  return answers.length === 0 ? "none" : answers.join(", ");
}

function shortVerdict(f: Finding): string {
  const pair = PAIRS.find((p) => pairName(p) === f.pair) ?? PAIRS[0];
  if (f.verdict === "same") return "·";
  if (f.verdict === "same route, forwarded form differs") return "form differs";
  if (f.verdict === "both refuse (different 4xx)") return "both refuse";
  if (f.verdict === "DIFFERENT BACKEND/PATH") return f.reason ? "DIFFERENT (known)" : "DIFFERENT!";
  return verdictText(f.verdict, pair);
}

/**
 * The report: with `detail`, a block per probe (what each target answered and forwarded, each pair's
 * verdict); then one table row per probe (`all`: every probe, else those where a pair disagrees), the
 * count per verdict, and what is unexplained.
 */
export function render(
  results: readonly ProbeResult[],
  opts: { all?: boolean; detail?: boolean } = {},
): string {
  const all = findings(results);
  const lines: string[] = [];
  const shown = results.filter(
    ({ probe }) => opts.all || all.some((f) => f.probe === probe.name && f.verdict !== "same"),
  );
  for (const { probe, outcomes } of opts.detail ? shown : []) {
    lines.push(`[${probe.class}] ${probe.name}  ${JSON.stringify(probe.bytes.slice(0, 120))}`);
    for (const t of TARGETS) lines.push(`  ${t.padEnd(6)} ${describeOutcome(outcomes[t])}`);
    for (const f of all.filter((x) => x.probe === probe.name)) {
      const pair = PAIRS.find((p) => pairName(p) === f.pair) ?? PAIRS[0];
      const note =
        f.verdict !== "DIFFERENT BACKEND/PATH" ? "" : f.reason ? ` (known: ${f.reason})` : "  UNEXPLAINED";
      lines.push(`  ${f.pair.padEnd(10)} ${verdictText(f.verdict, pair)}${note}`);
    }
  }
  const widths = [15, 47, 24, 24, 24, 19, 19, 19];
  const row = (cells: string[]) =>
    cells
      .map((c, i) => `${c} `.padEnd(widths[i] ?? 19))
      .join("")
      .trimEnd();
  lines.push("", row(["class", "probe", ...TARGETS, ...PAIRS.map(pairName)]));
  for (const { probe, outcomes } of shown) {
    const verdicts = all.filter((f) => f.probe === probe.name).map(shortVerdict);
    const name = probe.name.length > 46 ? `${probe.name.slice(0, 45)}…` : probe.name;
    lines.push(row([probe.class, name, ...TARGETS.map((t) => short(outcomes[t])), ...verdicts]));
  }
  lines.push("", summary(all));
  const { dangerous, stale } = unexplained(all);
  if (dangerous.length > 0)
    lines.push("", `UNEXPLAINED: ${dangerous.map((f) => `${f.probe} (${f.pair})`).join(", ")}`);
  if (stale.length > 0) lines.push("", `known differences that no longer happen: ${stale.join(", ")}`);
  return lines.join("\n");
}

/** Probes per verdict, one column per pair. */
function summary(all: readonly Finding[]): string {
  const verdicts: Verdict[] = [
    "same",
    "same route, forwarded form differs",
    "both refuse (different 4xx)",
    "left stricter",
    "right stricter",
    "different status",
    "DIFFERENT BACKEND/PATH",
  ];
  const rows = [`${"verdict".padEnd(36)}${PAIRS.map((p) => pairName(p).padStart(12)).join("")}`];
  for (const v of verdicts) {
    const label =
      v === "left stricter"
        ? "gatehouse (left) stricter"
        : v === "right stricter"
          ? "nginx (right) stricter"
          : v;
    const counts = PAIRS.map((p) =>
      String(all.filter((f) => f.pair === pairName(p) && f.verdict === v).length).padStart(12),
    );
    rows.push(`${label.padEnd(36)}${counts.join("")}`);
  }
  return rows.join("\n");
}
