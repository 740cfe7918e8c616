/** Command line and environment of `bun run bench`. */

export const sectionNames = [
  "proxy",
  "https",
  "peers",
  "guards",
  "tracing",
  "compression",
  "balancing",
  "waf",
  "streams",
  "grpc",
  "http2",
  "upstream-tls",
  "matcher",
  "apply",
  "memory",
  "startup",
] as const;
export type SectionName = (typeof sectionNames)[number];

export interface BenchArgs {
  readonly smoke: boolean;
  readonly only: readonly SectionName[];
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  /** Empty: N=1 and N=cores. */
  readonly workers: readonly number[];
  /** The proxy section's floor rows (BENCH_FLOOR=0 skips them). */
  readonly floor: boolean;
  /** The proxy section's requests: Host only, or with a browser's fields (BENCH_FIELDS=browser). */
  readonly fields: "host" | "browser";
}

const usage = `usage: bun run bench [--smoke] [--only ${sectionNames.join("|")}[,…]]
env: BENCH_ROUNDS (5), BENCH_SECONDS (8), BENCH_CONNECTIONS (32), BENCH_WORKERS (e.g. "1,2"),
     BENCH_SMOKE=1, BENCH_GATEHOUSE_ARGS (extra flags for every gatehouse process),
     BENCH_FLOOR=0 (skip the proxy section's Bun floor rows),
     BENCH_FIELDS=browser (proxy requests carry a browser's 14 fields besides Host)`;

function fieldsOf(raw: string | undefined): "host" | "browser" {
  if (raw === undefined || raw === "" || raw === "host") return "host";
  if (raw === "browser") return "browser";
  throw new Error(`BENCH_FIELDS=${raw}: host or browser\n${usage}`);
}

/** Throws with the usage text on anything it does not understand. */
export function parseBenchArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): BenchArgs {
  let smoke = env.BENCH_SMOKE === "1";
  let only: SectionName[] = [...sectionNames];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--smoke") smoke = true;
    else if (a === "--only" || a.startsWith("--only=")) {
      const value = a === "--only" ? argv[++i] : a.slice("--only=".length);
      if (!value) throw new Error(`--only needs a section\n${usage}`);
      only = value.split(",").map((s) => {
        if (!(sectionNames as readonly string[]).includes(s))
          throw new Error(`unknown section "${s}"\n${usage}`);
        return s as SectionName;
      });
    } else if (a === "--help" || a === "-h") throw new Error(usage);
    else throw new Error(`unknown argument "${a}"\n${usage}`);
  }
  const num = (name: string, fallback: number) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name}=${raw}: must be a whole number ≥ 1`);
    return n;
  };
  const workers = (env.BENCH_WORKERS ?? "")
    .split(",")
    .filter((s) => s.trim() !== "")
    .map((s) => {
      const n = Number(s);
      if (!Number.isInteger(n) || n < 1)
        throw new Error(`BENCH_WORKERS=${env.BENCH_WORKERS}: whole numbers ≥ 1`);
      return n;
    });
  return {
    smoke,
    only,
    rounds: smoke ? 1 : num("BENCH_ROUNDS", 5),
    seconds: smoke ? 1 : num("BENCH_SECONDS", 8),
    connections: num("BENCH_CONNECTIONS", 32),
    workers,
    floor: env.BENCH_FLOOR !== "0",
    fields: fieldsOf(env.BENCH_FIELDS),
  };
}
