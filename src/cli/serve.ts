import type { Server } from "bun";
import { AuthEnforcer } from "../auth/enforce.ts";
import { withKeyHealth } from "../auth/status.ts";
import type { ServeConfig } from "../config/config.ts";
import type { GatewayModel, Problem } from "../model/index.ts";
import { AccessLog, lineFormatOf } from "../observability/access-log/access-log.ts";
import { registerActivationMetrics } from "../observability/activation-metrics.ts";
import { type AdminState, createAdminApp } from "../observability/admin.ts";
import { registerCircuitBreakerMetrics } from "../observability/circuit-breaker-metrics.ts";
import { Dashboard } from "../observability/dashboard/dashboard.ts";
import { logger, setLogLevel } from "../observability/logger.ts";
import { GatewayMetrics } from "../observability/metrics.ts";
import { registerOutlierMetrics } from "../observability/outlier-metrics.ts";
import { MetricsAndAccessLog } from "../observability/request-observer.ts";
import { endpointSliceSeen } from "../proxy/activation/endpoint-wake.ts";
import { GatewayServer } from "../proxy/listeners/server.ts";
import { generatedDefaultCertificate } from "../proxy/listeners/tls.ts";
import { RateLimitRuntime } from "../ratelimit/runtime.ts";
import { type FolderLoad, FolderSource, loadProblems } from "../sources/file/index.ts";
import type { ClusterRuntime } from "../sources/kubernetes/cluster.ts";
import type { ResourceSnapshot } from "../sources/snapshot.ts";
import type { ObjectStatus } from "../status/types.ts";
import { withInfrastructure } from "../translate/gateway/infrastructure.ts";
import { translate } from "../translate/translate.ts";
import { engineQueue } from "../waf/engine-queue.ts";
import { wafHealth, wafHealthSignature, wafProblems, withWafHealth } from "../waf/status.ts";
import { type ActivationRuntime, startFolderActivation } from "./activation.ts";
import { installFolderSessionKeys } from "./session-key-setup.ts";
import { translateOptionsOf } from "./translate-options.ts";

const log = logger.child({ component: "serve" });

/** A running gateway: what `gatehouse serve` starts and tests drive in-process. */
export interface RunningGateway {
  readonly proxy: GatewayServer;
  readonly admin: Server<undefined>;
  readonly state: AdminState;
  readonly metrics: GatewayMetrics;
  /** The admin port's dashboard (its traffic history; `--workers` gives it the workers' counters). */
  readonly dashboard: Dashboard;
  /** Resolves after the next snapshot has been applied (tests use it to wait for a reload). */
  nextApply(): Promise<void>;
  /** Graceful stop: not ready → `delayMs` still serving → stop accepting → in-flight finish by `timeoutMs`. */
  stop(drain?: { delayMs?: number; timeoutMs?: number }): Promise<void>;
}

/**
 * Start order: admin listener first (so probes answer while we load), then the source's first load,
 * translate, and the proxy listeners; from then on each source change is translated and swapped in.
 * A translation problem never stops serving: the objects at fault are left out and logged.
 */
export async function startGateway(
  config: ServeConfig,
  /**
   * `processes`: the serving processes of this replica (main.ts spawns `--workers`); default 1.
   * `workerAdmins`: on the primary, each worker's admin port, filled in as the workers report it.
   */
  opts: { readonly processes?: number; readonly workerAdmins?: ReadonlyMap<number, number> } = {},
): Promise<RunningGateway> {
  setLogLevel(config["log-level"]);
  // One engine worker per process, started only when a route asks for a WAF (src/waf/engine-queue.ts).
  engineQueue.configure({ limit: config["waf-queue-limit"] });
  const state: AdminState = { ready: false, model: undefined, problems: [], statuses: [] };
  const metrics = new GatewayMetrics();
  registerOutlierMetrics(metrics.registry);
  registerCircuitBreakerMetrics(metrics.registry);
  registerActivationMetrics(metrics.registry);
  // Before any listener, so a --redis-url that does not parse fails the start with nothing to clean up.
  const rateLimit = new RateLimitRuntime({
    redisUrl: config["redis-url"],
    commandTimeoutMs: config["redis-timeout-ms"],
    metrics,
  });
  const dashboard = new Dashboard(state, metrics.routes);
  const admin = Bun.serve({
    port: config["admin-port"],
    hostname: config["admin-bind"] ?? config.bind,
    fetch: createAdminApp(state, metrics, dashboard).fetch,
  });
  const auth = new AuthEnforcer({ metrics });
  const accessLog = config["access-log-sample"] > 0 ? accessLogOf(config) : undefined;
  // Loaded only with an endpoint: without one, no OpenTelemetry code runs or loads (docs/observability.md).
  const otlpUrl = config["otlp-endpoint"];
  const otelEnv = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"].find(
    (v) => process.env[v],
  );
  if (otlpUrl === undefined && otelEnv !== undefined)
    log.warn(`${otelEnv} is set but tracing is off: --otlp-endpoint (GATEHOUSE_OTLP_ENDPOINT) turns it on`);
  const tracing =
    otlpUrl === undefined
      ? undefined
      : (await import("../observability/tracing/tracing.ts")).startTracing(
          otlpUrl,
          config["trace-sample-rate"],
          metrics.registry,
        );
  const proxy = new GatewayServer({
    bind: config.bind,
    defaultUpstreamTimeoutMs: config["upstream-timeout-ms"],
    ...(config["upstream-read-timeout-ms"] !== undefined
      ? { upstreamReadTimeoutMs: config["upstream-read-timeout-ms"] }
      : {}),
    ...(config["upstream-send-timeout-ms"] !== undefined
      ? { upstreamSendTimeoutMs: config["upstream-send-timeout-ms"] }
      : {}),
    clientBodyTimeoutMs: config["client-body-timeout-ms"],
    streamIdleTimeoutMs: config["stream-idle-timeout-ms"],
    udpIdleTimeoutMs: config["udp-idle-timeout-ms"],
    requestBufferBytes: config["request-buffer-bytes"],
    underscoresInHeaders: config["underscores-in-headers"],
    requestHeadLimits: {
      bytes: config["max-request-header-bytes"],
      fields: config["max-request-header-count"],
    },
    maxConnections: config["max-connections"],
    maxConnectionsPerPeer: config["max-connections-per-peer"],
    trustedProxies: config["trusted-proxies"],
    proxyProtocol: config["proxy-protocol"],
    proxyProtocolFrom: config["proxy-protocol-from"],
    front: config.front,
    http2: config.http2,
    sharedTlsPorts: config["enable-ssl-passthrough"],
    guards: { auth, rateLimit: rateLimit.enforcer },
    observer: new MetricsAndAccessLog(metrics, accessLog, tracing),
  });
  metrics.setInflightSource(() => proxy.pendingRequests());
  metrics.setConnectionSource(() => proxy.openConnections());
  metrics.setStreamSource(() => proxy.passthrough.stats());
  // Made once per process (a new key: under a millisecond); served for SNI misses on HTTPS listeners.
  const defaultCert = generatedDefaultCertificate();
  if (defaultCert === undefined) log.warn("could not make the default TLS certificate; none is served");
  let waiters: (() => void)[] = [];
  let applied:
    | {
        model: GatewayModel;
        statuses: readonly ObjectStatus[];
        snapshot: ResourceSnapshot;
        problems: readonly Problem[];
      }
    | undefined;
  let wafShown = "";
  const publishStatuses = () => {
    if (applied === undefined) return;
    const { model, statuses, snapshot, problems } = applied;
    // Whether each WAF's engine and rule set can run is known only once the proxy compiled the table and
    // the engine's worker answered: a Degraded condition on WAFPolicies, a problem for every source.
    const waf = wafHealth(model);
    wafShown = wafHealthSignature(waf);
    const wafDown = wafProblems(waf);
    state.problems = wafDown.length === 0 ? problems : [...problems, ...wafDown];
    const keyed = withWafHealth(
      withKeyHealth(statuses, auth.remoteKeyPolicies(), auth.unavailableKeys()),
      waf,
    );
    const withKeys = activation?.withConditions(keyed) ?? keyed;
    rateLimit.publish(model, withKeys, (shown) => {
      // What /debug/status shows of each Gateway's infrastructure (the writer takes `shown` as it is).
      state.statuses = withInfrastructure(shown, snapshot.gateways);
      cluster?.applied(snapshot, shown);
    });
  };
  auth.watchKeys(publishStatuses);
  // A rule set's load answer, a worker that stops or is started again: published when the WAF health moved.
  const unwatchWaf = engineQueue.onHealthChange(() => {
    if (applied !== undefined && wafHealthSignature(wafHealth(applied.model)) !== wafShown) publishStatuses();
  });
  let logged = new Set<string>();
  let unloggedShares = "";
  // Set once stop() begins: an apply during the drain delay (the source still runs) must not make the
  // gateway ready again, or the load balancer would keep sending to a process about to close.
  let draining = false;
  // Applies are serialised so a slow listener start cannot interleave with the next snapshot.
  let chain: Promise<void> = Promise.resolve();

  const apply = (snapshot: ResourceSnapshot, sourceProblems: readonly Problem[] = []) => {
    chain = chain.then(async () => {
      const started = performance.now();
      try {
        const { model, problems, statuses } = translate(
          snapshot,
          translateOptionsOf(config, defaultCert, Date.now()),
        );
        logged = logNewProblems(problems, logged);
        if (accessLog === undefined) unloggedShares = warnUnloggedShares(model, unloggedShares);
        // Key fetchers start before the routes that need them serve (they fail closed until keys load).
        auth.update(model);
        await proxy.apply(cluster ? cluster.served(model) : model); // in a cluster: internal ports
        state.model = model;
        // Objects the source left out before translation (failed validation, or of a kind Gatehouse does
        // not read) are listed too, and counted in the problems metric.
        const all = [...problems, ...(cluster ? cluster.problems() : sourceProblems)];
        state.problems = all;
        // Published now, and again when the rate limit store's, a key set's or a WAF engine's health
        // changes (the policies' Degraded conditions).
        applied = { model, statuses, snapshot, problems: all };
        publishStatuses();
        if (!draining) state.ready = true;
        metrics.configApplied(true, (performance.now() - started) / 1000, model, all);
        log.info("config applied", {
          listeners: model.listeners.length,
          routes: model.listeners.reduce(
            (n, l) => n + l.virtualHosts.reduce((m, v) => m + v.routes.length, 0),
            0,
          ),
          problems: problems.length,
          ms: Math.round(performance.now() - started),
        });
      } catch (err) {
        // E.g. a port already in use: keep serving what we had, say so loudly.
        log.error("config not applied; the previous one keeps serving", { error: err as Error });
        metrics.configApplied(false, (performance.now() - started) / 1000);
      }
      const done = waiters;
      waiters = [];
      for (const w of done) w();
    });
  };

  // --kube: informers instead of a folder; the same apply path. Leader election and the status writer
  // ride along (see src/sources/kubernetes/cluster.ts).
  if (!config.kube) installFolderSessionKeys(config);
  // Loaded only with --kube: with the Kubernetes client library they cost a folder gateway 24 MB of RSS.
  const cluster: ClusterRuntime | undefined = config.kube
    ? new (await import("../sources/kubernetes/cluster.ts")).ClusterRuntime(config, apply, endpointSliceSeen)
    : undefined;
  const activation: ActivationRuntime | undefined = cluster
    ? (await import("./cluster-activation.ts")).startClusterActivation(
        config,
        cluster,
        opts.processes ?? 1,
        publishStatuses,
        opts.workerAdmins,
      )
    : startFolderActivation(publishStatuses);
  const source: { start(): Promise<unknown>; stop(): void | Promise<void> } = cluster
    ? { start: () => cluster.start(), stop: () => cluster.stop() }
    : new FolderSource(
        config.dir as string,
        // What the read could not load or skipped (the folder source logs it itself).
        (load: FolderLoad) => apply(load.snapshot, loadProblems(load)),
        { debounceMs: config["debounce-ms"] },
      );
  try {
    await source.start();
  } catch (err) {
    activation.close();
    await proxy.stop();
    auth.close();
    unwatchWaf();
    await rateLimit.close();
    await tracing?.spans.shutdown();
    dashboard.close();
    admin.stop(true);
    throw err;
  }
  await chain;
  if (!state.ready) {
    activation.close();
    source.stop();
    await proxy.stop();
    auth.close();
    unwatchWaf();
    await rateLimit.close();
    await tracing?.spans.shutdown();
    dashboard.close();
    admin.stop(true);
    throw new Error("the first configuration could not be served (see the log above)");
  }

  return {
    proxy,
    admin,
    state,
    metrics,
    dashboard,
    nextApply: () => new Promise<void>((resolve) => waiters.push(resolve)),
    async stop(drain: { delayMs?: number; timeoutMs?: number } = {}) {
      // Readiness goes false first so load balancers stop sending; keep serving through the delay, then
      // stop accepting and give in-flight requests until the deadline.
      draining = true;
      state.ready = false;
      if (drain.delayMs) await Bun.sleep(drain.delayMs);
      await source.stop(); // in a cluster this also hands the Lease over
      await chain;
      activation.close();
      const stopped = proxy.stop();
      const timeoutMs = drain.timeoutMs ?? config["drain-timeout-ms"];
      const inTime = await Promise.race([stopped.then(() => true), Bun.sleep(timeoutMs).then(() => false)]);
      if (!inTime) {
        log.warn("drain deadline reached; closing remaining connections", { timeoutMs });
        // Cut what is still open rather than leave it to process.exit: a library user (tests, an
        // embedding) gets its listeners and sockets closed when stop() resolves. Bounded, in case a
        // handler ignores the cut; whatever is left then is garbage the caller's exit collects.
        await Promise.race([proxy.stop(true), Bun.sleep(1000)]);
      }
      auth.close();
      unwatchWaf();
      await rateLimit.close();
      // What was traced before the stop is sent (bounded: a collector that is down cannot hold the exit).
      await tracing?.spans.shutdown();
      dashboard.close();
      admin.stop(true);
      engineQueue.stop();
    },
  };
}

/** Log each problem once while it persists; a fixed problem that comes back is logged again. */
function logNewProblems(problems: readonly Problem[], seen: Set<string>): Set<string> {
  const now = new Set<string>();
  for (const p of problems) {
    const key = `${p.object.kind}/${p.object.namespace}/${p.object.name}|${p.reason}|${p.message}`;
    now.add(key);
    if (seen.has(key)) continue;
    const fields = { object: `${p.object.kind} ${p.object.namespace}/${p.object.name}`, reason: p.reason };
    if (p.severity === "error") log.error(p.message, fields);
    else if (p.severity === "warning") log.warn(p.message, fields);
    else log.info(p.message, fields);
  }
  return now;
}

/** The access log the flags ask for (the config's parse checked them: a refusal here is a bug). */
function accessLogOf(config: ServeConfig): AccessLog {
  const format = lineFormatOf({
    fields: config["access-log-fields"],
    template: config["access-log-format"],
    escape: config["access-log-escape"],
  });
  if ("error" in format) throw new Error(format.error);
  return new AccessLog(config["access-log-sample"], undefined, format);
}

/**
 * With `--access-log-sample 0` there is no access log: routes that ask for a share of their own
 * (`gatehouse.dev/access-log-sample`) are named in a warning, once per change of that list.
 */
function warnUnloggedShares(model: GatewayModel, said: string): string {
  const routes = new Set<string>();
  for (const l of model.listeners)
    for (const v of l.virtualHosts)
      for (const r of v.routes) if ((r.accessLogSample ?? 0) > 0 && r.accessLog !== false) routes.add(r.name);
  const now = [...routes].sort().join(", ");
  if (now !== "" && now !== said)
    log.warn("routes ask for an access-log share, but --access-log-sample 0 turns the access log off", {
      routes: now,
    });
  return now;
}
