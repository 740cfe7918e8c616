#!/usr/bin/env bun
/**
 * Composition root of the `gatehouse` command: `serve` runs the gateway, `translate` prints what a set of
 * manifests becomes, `convert` writes Ingresses as Gateway API objects. Stop order on SIGTERM/SIGINT: readiness false, sources stop, listeners close after
 * in-flight requests finish.
 */
import type { InputSource } from "./cli/input.ts";
import { translateOptionsOf, translationDefaults, translationFlags } from "./cli/translate-options.ts";
import { WORKER_SESSION_KEY_ENV } from "./cli/worker-env.ts";
import type { ServeConfig } from "./config/config.ts";
import { logger } from "./observability/logger.ts";
import type { PeerMetrics } from "./observability/metrics.ts";

const usage = `gatehouse — a Gateway API-first ingress gateway

Usage:
  gatehouse serve --dir DIR [--session-key-file FILE] | --kube [--kubeconfig FILE]
                  [--http-port 8080] [--https-port 8443] [--admin-port 9090] [--bind 0.0.0.0]
                  [--workers N] [--ingress-class gatehouse] [--watch-ingress-without-class]
                  [--gateway-controller gatehouse.dev/gateway-controller] [--gateway-address-pool CIDR]
                  [--upstream-timeout-ms 60000] [--upstream-read-timeout-ms MS] [--upstream-send-timeout-ms MS]
                  [--debounce-ms 100]
                  [--client-body-timeout-ms 60000] [--request-buffer-bytes 65536]
                  [--stream-idle-timeout-ms 3600000] [--udp-idle-timeout-ms 60000]
                  [--max-connections 16384] [--max-connections-per-peer 0] [--underscores-in-headers false]
                  [--max-request-header-bytes 65536] [--max-request-header-count 100]
                  [--trusted-proxies CIDR,...] [--proxy-protocol none|all|PORT,...]
                  [--proxy-protocol-from CIDR,...]
                  [--drain-delay-ms 5000] [--drain-timeout-ms 30000]
                  [--default-certificate NS/NAME] [--ssl-redirect true] [--http2 false]
                  [--error-pages-configmap NS/NAME] [--default-backend-service NS/NAME]
                  [--enable-ssl-passthrough false]
                  [--access-log-sample 1] [--access-log-fields NAME,... | --access-log-format TEMPLATE|upstreaminfo
                  [--access-log-escape default|json]] [--log-level info]
                  [--otlp-endpoint URL] [--trace-sample-rate 0.01]
                  [--redis-url redis://HOST:6379] [--redis-timeout-ms 50] [--waf-queue-limit 256]
                  [--front raw|bun] [--admin-bind ADDR] [--allow-unenforced-annotations]
                  [--global-allowed-response-headers NAME,...]
                  [--global-auth-url URL] [--global-auth-signin URL] [--global-auth-response-headers NAME,...]
                  [--compression gzip,br,zstd] [--compression-types TYPE,...] [--compression-min-bytes 256]
                  [--gzip-level 1] [--brotli-level 4] [--zstd-level 3]
  gatehouse translate -f FILE [-f FILE...] | --kube [--kubeconfig FILE]  [--strict]
                      [--ingress-class NAME] [--ingress-controller NAME] [--watch-ingress-without-class]
                      [--gateway-controller NAME] [--gateway-address-pool CIDR]
                      [--http-port N] [--https-port N] [--ssl-redirect BOOL] [--default-certificate NS/NAME]
                      [--error-pages-configmap NS/NAME] [--default-backend-service NS/NAME]
                      [--allow-unenforced-annotations] [--enable-ssl-passthrough BOOL]
                      [--global-allowed-response-headers NAME,...]
                      [--global-auth-url URL] [--global-auth-signin URL] [--global-auth-response-headers NAME,...]
                      [--compression CODINGS] [--compression-types TYPE,...] [--compression-min-bytes N]
                      [--gzip-level N] [--brotli-level N] [--zstd-level N]
  gatehouse routes -f FILE [-f FILE...] | --kube [--kubeconfig FILE]  [translate's flags] | --admin URL
                  [--host HOST --path PATH [--method M] [--header NAME=VALUE...]]  (which route serves it, why not the others)
  gatehouse convert -f FILE [-f FILE...] | --kube [--kubeconfig FILE]  [--gateway NS/NAME] [--portable] [--strict]
                    [translate's flags; --http-port 80 and --https-port 443 unless given]
  gatehouse version [--json]

Every serve flag can also be set as GATEHOUSE_<FLAG_NAME>, e.g. GATEHOUSE_HTTP_PORT=8080.
Cluster flags (--publish-service, --status-address, leader election, --read-only): docs/kubernetes.md.
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "serve") {
    const config = await configOf("serve", rest);
    if (config === undefined) return 2;
    const workers = config.workers === 0 ? (await import("node:os")).availableParallelism() : config.workers;
    const workerAdmins = new Map<number, number>();
    const children = process.env.GATEHOUSE_WORKER_OF
      ? []
      : spawnWorkers(
          (await import("./cli/self.ts")).selfCommand(),
          workers - 1,
          rest,
          workerAdmins,
          // The primary's session key (cli/session-key-setup.ts): its workers sign and verify alike.
          (await import("./cli/session-key-setup.ts")).workerSessionKeyEnv(),
        );
    if (process.env.GATEHOUSE_WORKER_OF) exitWithParent(Number(process.env.GATEHOUSE_WORKER_OF));
    // Loaded only here: the serve path (Kubernetes client, listeners, Redis) is most of a cold start, and
    // `translate` needs none of it.
    const { startGateway } = await import("./cli/serve.ts");
    const gateway = await startGateway(config, { processes: workers, workerAdmins });
    if (process.env.GATEHOUSE_WORKER_OF) process.send?.({ adminPort: gateway.admin.port });
    if (children.length > 0) {
      gateway.metrics.setPeers(() => workerMetrics(workerAdmins));
      const { fetchRouteTotals } = await import("./observability/dashboard/route-totals.ts");
      gateway.dashboard.setPeers(() => fetchRouteTotals(workerAdmins.values()));
    }
    logger.info("gatehouse serving", { listeners: gateway.proxy.ports(), admin: gateway.admin.port });
    // SIGTERM (Kubernetes) drains with the configured delay; Ctrl-C stops without waiting.
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once("SIGTERM", () => resolve("SIGTERM"));
      process.once("SIGINT", () => resolve("SIGINT"));
    });
    logger.info("stopping", { signal });
    for (const child of children) child.kill(signal);
    await Promise.all([
      gateway.stop({ delayMs: signal === "SIGTERM" ? config["drain-delay-ms"] : 0 }),
      ...children.map((c) => c.exited),
    ]);
    return 0;
  }
  if (command === "convert") {
    (await import("zod")).z.config({ jitless: true });
    const { convertArgs, runConvert } = await import("./cli/convert.ts");
    const parsed = convertArgs(rest);
    if (typeof parsed === "string") {
      process.stderr.write(`gatehouse convert: ${parsed}\n\n${usage}`);
      return 2;
    }
    const args = await translationInput(command, parsed.rest);
    if (typeof args === "number") return args;
    const options = translateOptionsOf(args.config, undefined, Date.now());
    const input = await (await import("./cli/input.ts")).loadInput(args.source, command);
    return runConvert(input, options, parsed.gateway, parsed.portable, args.strict);
  }
  if (command === "translate" || command === "routes") {
    // Before any schema is built (zod reads it then): zod compiles each object schema's parser with
    // `new Function` on first use, which one short run pays for and does not earn back (a run reading
    // 4,000 objects is no slower without it).
    (await import("zod")).z.config({ jitless: true });
    // `routes --host H --path P`: which route serves that request (cli/route-explain.ts).
    const asked =
      command === "routes" ? (await import("./cli/route-explain.ts")).routeQueryArgs(rest) : { rest };
    if (typeof asked === "string") {
      process.stderr.write(`gatehouse routes: ${asked}\n\n${usage}`);
      return 2;
    }
    const query = "query" in asked ? asked.query : undefined;
    const explain =
      query === undefined
        ? undefined
        : (await import("./cli/route-explain.ts")).explainRoute.bind(undefined, query);
    if ("admin" in asked && asked.admin !== undefined) {
      if (asked.rest.length > 0) {
        process.stderr.write(
          `gatehouse routes: --admin reads a running gateway; not with ${asked.rest.join(" ")}\n\n${usage}`,
        );
        return 2;
      }
      return (await import("./cli/routes.ts")).runRoutesFromAdmin(asked.admin, explain);
    }
    const args = await translationInput(command, asked.rest);
    if (typeof args === "number") return args;
    // No certificate is generated here: a default certificate only matters to a serving process.
    const options = translateOptionsOf(args.config, undefined, Date.now());
    const input = await (await import("./cli/input.ts")).loadInput(args.source, command);
    if (command === "routes") return (await import("./cli/routes.ts")).runRoutes(input, options, explain);
    const { runTranslate } = await import("./cli/translate.ts");
    return runTranslate(input, options, args.strict);
  }
  if (command === "version" && (rest.length === 0 || (rest.length === 1 && rest[0] === "--json"))) {
    const { buildInfo } = await import("./cli/self.ts");
    const info = buildInfo();
    const text =
      rest[0] === "--json"
        ? `${JSON.stringify(info)}\n`
        : `gatehouse ${info.version} (commit ${info.commit}, ${info.build}, bun ${info.bun}, ${info.platform})\n`;
    await Bun.write(Bun.stdout, text);
    return 0;
  }
  process.stdout.write(usage);
  return command === undefined || command === "help" || command === "--help" ? 0 : 2;
}

/**
 * `-f FILE` (repeatable) or `--kube [--kubeconfig FILE]`, `--strict`, and the serve flags that change
 * translation, validated as serve validates them; an exit code after saying why on stderr when they are
 * not usable.
 */
async function translationInput(
  command: string,
  rest: readonly string[],
): Promise<
  { source: InputSource; config: ServeConfig | typeof translationDefaults; strict: boolean } | number
> {
  const files: string[] = [];
  const flags: string[] = [];
  let strict = false;
  let kube = false;
  let kubeconfig: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (arg === "--strict") strict = true;
    else if (arg === "--kube") kube = true;
    else if (arg === "--kubeconfig") kubeconfig = rest[++i] ?? "";
    else if (arg.startsWith("--kubeconfig=")) kubeconfig = arg.slice(13);
    else if (arg === "-f" || arg === "--file") files.push(rest[++i] ?? "");
    else if (arg.startsWith("--file=")) files.push(arg.slice(7));
    else flags.push(arg);
  }
  const named = flags.filter((a) => a.startsWith("--")).map((a) => a.slice(2).split("=")[0] as string);
  const foreign = named.filter((n) => !(translationFlags as readonly string[]).includes(n));
  const why =
    foreign.length > 0
      ? `not a ${command} flag: --${foreign.join(", --")}`
      : kube && files.length > 0
        ? "give -f FILE or --kube, not both"
        : !kube && (files.length === 0 || files.includes(""))
          ? "give at least one -f FILE, or --kube"
          : kubeconfig !== undefined && (!kube || kubeconfig === "")
            ? "--kubeconfig FILE goes with --kube"
            : undefined;
  if (why !== undefined) {
    process.stderr.write(`gatehouse ${command}: ${why}\n\n${usage}`);
    return 2;
  }
  const config =
    flags.length === 0 && !flagsInEnvironment()
      ? translationDefaults
      : await configOf(command, ["--dir", ".", ...flags]);
  const source: InputSource = kube
    ? { kind: "kube", ...(kubeconfig !== undefined ? { kubeconfig } : {}) }
    : { kind: "files", files };
  return config === undefined ? 2 : { source, config, strict };
}

/**
 * Flags and environment, validated; undefined (after saying why on stderr) when they are not valid. The
 * configuration module (zod's schema of every flag, node:util's parseArgs) is loaded only here.
 */
async function configOf(command: string, args: readonly string[]): Promise<ServeConfig | undefined> {
  const { ConfigError, parseServeConfig } = await import("./config/config.ts");
  try {
    return parseServeConfig(args, process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`gatehouse ${command}: ${err.message}\n\n${usage}`);
    return undefined;
  }
}

/** Variables of the process tree, not flags: `translate` may ignore them. */
const notFlags = new Set([
  "GATEHOUSE_TRANSLATE_CHECK",
  "GATEHOUSE_WORKER_OF",
  "GATEHOUSE_WORKER_ID",
  WORKER_SESSION_KEY_ENV,
]);

/** Whether the environment may set a serve flag (`GATEHOUSE_<FLAG>`), which config.ts must then read. */
function flagsInEnvironment(): boolean {
  return Object.keys(process.env).some((name) => name.startsWith("GATEHOUSE_") && !notFlags.has(name));
}

/**
 * Extra serving processes: the same command, sharing the traffic ports through SO_REUSEPORT (the kernel
 * spreads connections across them). Only the first process serves the admin port; each worker watches
 * the same source on its own, so they converge on the same configuration. `self` starts this program
 * (cli/self.ts: `bun main.ts` from source, the executable alone when compiled). A worker's own admin listener
 * is on an ephemeral loopback port it reports over IPC (into `admins`), where the primary collects its
 * metrics from.
 */
function spawnWorkers(
  self: readonly string[],
  count: number,
  args: readonly string[],
  admins: Map<number, number>,
  keyEnv: Readonly<Record<string, string>>,
): Bun.Subprocess[] {
  const workerArgs = ["--admin-port", "0", "--admin-bind", "127.0.0.1", "--workers", "1"];
  return Array.from({ length: Math.max(0, count) }, (_, i) =>
    Bun.spawn([...self, "serve", ...args, ...workerArgs], {
      env: {
        ...process.env,
        ...keyEnv,
        GATEHOUSE_WORKER_OF: String(process.pid),
        GATEHOUSE_WORKER_ID: String(i + 1),
      },
      stdio: ["ignore", "inherit", "inherit"],
      ipc: (message: { adminPort?: unknown }) => {
        if (typeof message?.adminPort === "number") admins.set(i + 1, message.adminPort);
      },
      // A worker that dies takes the whole gateway down rather than leaving it silently degraded.
      onExit: (_proc, code) => {
        if (code !== 0 && code !== null) {
          logger.error("worker exited", { worker: i + 1, code });
          process.exit(1);
        }
      },
    }),
  );
}

/** Each worker's own samples; a worker that does not answer within a second is left out of this scrape. */
async function workerMetrics(admins: ReadonlyMap<number, number>): Promise<PeerMetrics[]> {
  const replies = await Promise.all(
    [...admins.values()].map(async (port) => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/metrics/process.json`, {
          signal: AbortSignal.timeout(1000),
        });
        return res.ok ? ((await res.json()) as PeerMetrics) : undefined;
      } catch {
        return undefined;
      }
    }),
  );
  return replies.filter((r) => r !== undefined);
}

/** A worker whose primary died (even by SIGKILL) must not keep serving on its own. */
function exitWithParent(parentPid: number): void {
  setInterval(() => {
    try {
      process.kill(parentPid, 0);
    } catch {
      process.exit(0);
    }
  }, 1000).unref();
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    logger.error("fatal", { error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    process.exit(1);
  },
);
