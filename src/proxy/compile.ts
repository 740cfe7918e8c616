/**
 * GatewayModel → RouteTable. Pure and total: nothing in a model makes it throw. What cannot be
 * compiled is reported in `warnings` and made harmless — a route with a bad regex never matches, a
 * route with a filter we cannot run answers 500 (and logs why on each hit), never a silent skip.
 */
import { compileClientCertificate } from "../auth/client-certificate.ts";
import { compileIPAccess, hasAllowList } from "../auth/ip-access.ts";
import type {
  Backend,
  BackendActivation,
  Balancing,
  GatewayModel,
  Listener,
  PassiveHealthCheck,
  Route,
  VirtualHost,
} from "../model/index.ts";
import { parseLocationTemplate } from "../model/location-template.ts";
import { compileWaf } from "../waf/compiled.ts";
import { activatorFor, keepActivators } from "./activation/registry.ts";
import { compileBackendTLS } from "./backend-tls/options.ts";
import { RouteBalancer } from "./balancing/route-balancer.ts";
import { breakerOf, clientZoneFor, keepCircuitBreakers } from "./circuit-breaker/registry.ts";
import { compileCompression } from "./compression/response-rules.ts";
import { compileErrorPages } from "./error-pages/compile.ts";
import { compileFilterChain, joinChains } from "./filters/chain.ts";
import type { FilterChain } from "./filters/filter-types.ts";
import { activeCheckerFor, keepActiveCheckers } from "./health/active-registry.ts";
import { keepOutlierDetectors, outlierDetectorFor } from "./health/outlier-registry.ts";
import { buildPathIndex } from "./match/path-index.ts";
import type { ValueRegex } from "./match/regex/regex.ts";
import { compileAnchored, compileValueMatcher, type ValueMatcher } from "./match/values.ts";
import { weightedPicker } from "./request/balancer.ts";
import { compilePathModifier } from "./request/path-modifier.ts";
import { PLAIN_TEXT } from "./request/responses.ts";
import {
  type BackendChoice,
  type CompiledAction,
  type CompiledBackend,
  type CompiledRoute,
  type CompiledVirtualHost,
  type ListenerTable,
  PATH_EXACT,
  PATH_NEVER,
  PATH_PREFIX,
  PATH_REGEX,
  type RouteTable,
  type VirtualHostIndex,
} from "./table.ts";

type Warn = (msg: string) => void;

const ROUND_ROBIN: Balancing = { algorithm: "RoundRobin" };
/** A detector for active checks alone: every passive count off, so only the probes take endpoints out. */
const NO_EJECTION: PassiveHealthCheck = {
  consecutive5xxErrors: 0,
  consecutiveGatewayErrors: 0,
  splitExternalLocalOriginErrors: false,
  consecutiveLocalOriginFailures: 0,
  baseEjectionMs: 30_000,
  intervalMs: 3_000,
  maxEjectionPercent: 0,
};

/** How a table is compiled. */
export interface CompileOptions {
  /**
   * Start (and keep) the active health checks the backends ask for: a serving gateway's table; false for
   * one only read (`gatehouse routes --host`), which must send no probe. Default true.
   */
  readonly probes?: boolean;
}

export function compile(model: GatewayModel, opts: CompileOptions = {}): RouteTable {
  const warnings: string[] = [];
  const warn: Warn = (m) => warnings.push(m);
  const probes = opts.probes !== false;
  const backends = new Map<string, CompiledBackend>();
  for (const [id, b] of Object.entries(model.backends)) backends.set(id, compileBackend(id, b, probes));
  // Detectors outlive a table (an ejection survives a reload); those no backend uses any more are dropped.
  // A policy variant of a Service port keeps its state under the port's backend id (Backend.stateOf).
  const all = [...backends.values()];
  const health = (b: CompiledBackend) => model.backends[b.id]?.stateOf?.health ?? b.id;
  keepOutlierDetectors(new Set(all.flatMap((b) => (b.health === undefined ? [] : [health(b)]))));
  const probed = (b: CompiledBackend) => b.health !== undefined && model.backends[b.id]?.healthCheck?.active;
  if (probes) keepActiveCheckers(new Set(all.flatMap((b) => (probed(b) ? [health(b)] : []))));
  // Activators too: a request held while its backend wakes survives a reload.
  keepActivators(new Set(all.flatMap((b) => (b.activation === undefined ? [] : [b.id]))));
  const ctx: CompileContext = { backends, models: model.backends, warn };
  const listeners = model.listeners.map((l) => compileListener(l, ctx));
  // Breakers and client zones too: a reload must not forget the requests in flight.
  const breaker = (b: CompiledBackend) => model.backends[b.id]?.stateOf?.breaker ?? b.id;
  keepCircuitBreakers(
    new Set(all.flatMap((b) => (b.breaker === undefined ? [] : [breaker(b)]))),
    new Set(model.listeners.flatMap((l) => l.virtualHosts.flatMap((vh) => vh.routes.flatMap(zoneOf)))),
  );
  return { listeners, warnings };
}

interface CompileContext {
  readonly backends: ReadonlyMap<string, CompiledBackend>;
  readonly models: Readonly<Record<string, Backend>>;
  readonly warn: Warn;
}

function compileBackend(id: string, b: Backend, probes: boolean): CompiledBackend {
  const bases = b.problem ? [] : b.endpoints.map((e) => endpointBase(e.address, e.port));
  const problem = b.problem ?? (bases.length === 0 ? "NoReadyEndpoints" : undefined);
  const tls = b.tls === undefined ? undefined : compileBackendTLS(b.tls);
  const passive = b.healthCheck?.passive;
  const active = b.healthCheck?.active;
  // Always set (undefined when unchecked): one object shape for every backend on the hot path. Active
  // checks take endpoints out through the same detector (with no passive counts of their own).
  const health =
    (passive === undefined && active === undefined) || bases.length === 0
      ? undefined
      : outlierDetectorFor(b.stateOf?.health ?? id, passive ?? NO_EJECTION, bases);
  if (probes && active !== undefined && health !== undefined)
    activeCheckerFor(b.stateOf?.health ?? id, active, tls, health, bases);
  // Only a backend that is there but asleep is woken: a missing Service or port stays a plain 503.
  const wakes = b.activation !== undefined && (b.problem === undefined || b.problem === "NoReadyEndpoints");
  const activation = wakes
    ? activatorFor(id, b.activation as BackendActivation, bases, b.service)
    : undefined;
  return {
    id,
    bases,
    problem,
    h2c: b.protocol === "h2c",
    ...(tls !== undefined ? { tls } : {}),
    health,
    activation,
    compression: b.compression === undefined ? undefined : compileCompression(b.compression),
    breaker: breakerOf(b.stateOf?.breaker ?? id, b.circuitBreaker),
    balancing: b.loadBalancer,
    next: 0,
  };
}

function zoneOf(r: Route): string[] {
  return r.clientConcurrency === undefined ? [] : [r.clientConcurrency.zone];
}

/** `http://10.0.0.1:8080`, `http://[fd00::1]:8080`: an endpoint as CompiledBackend `bases` hold it. */
export function endpointBase(address: string, port: number): string {
  return `http://${address.includes(":") ? `[${address}]` : address}:${port}`;
}

function compileListener(l: Listener, ctx: CompileContext): ListenerTable {
  const exact = new Map<string, CompiledVirtualHost>();
  const oneLabel = new Map<string, CompiledVirtualHost>();
  const anyLabels = new Map<string, CompiledVirtualHost>();
  let any: CompiledVirtualHost | undefined;
  const claim = (map: Map<string, CompiledVirtualHost>, key: string, vh: VirtualHost) => {
    if (map.has(key)) ctx.warn(`listener ${l.name}: duplicate virtual host ${vh.hostname}; first one kept`);
    else map.set(key, compileVirtualHost(vh, ctx));
  };
  for (const vh of l.virtualHosts) {
    if (vh.match === "Exact") claim(exact, vh.hostname.toLowerCase(), vh);
    else if (vh.match === "Any") {
      if (any) ctx.warn(`listener ${l.name}: more than one catch-all virtual host; first one kept`);
      else any = compileVirtualHost(vh, ctx);
    } else if (!vh.hostname.startsWith("*.")) {
      ctx.warn(`listener ${l.name}: wildcard virtual host ${vh.hostname} does not start with "*."; skipped`);
    } else
      claim(vh.match === "WildcardOneLabel" ? oneLabel : anyLabels, vh.hostname.slice(2).toLowerCase(), vh);
  }
  const hosts: VirtualHostIndex = { exact, oneLabel, anyLabels, any };
  const scheme = l.protocol === "HTTPS" ? "https" : "http";
  return {
    name: l.name,
    address: l.address,
    port: l.port,
    ...(l.bindPort !== undefined ? { bindPort: l.bindPort } : {}),
    protocol: l.protocol,
    hostname: l.hostname,
    scheme,
    tls: l.tls,
    hosts,
    smallestBodyMax: smallestBodyMax(hosts),
  };
}

function smallestBodyMax(hosts: VirtualHostIndex): number {
  let min = Number.POSITIVE_INFINITY;
  const all = [...hosts.exact.values(), ...hosts.oneLabel.values(), ...hosts.anyLabels.values()];
  if (hosts.any !== undefined) all.push(hosts.any);
  for (const vh of all) for (const r of vh.routes) min = Math.min(min, r.requestBodyMaxBytes ?? min);
  return min;
}

function compileVirtualHost(vh: VirtualHost, ctx: CompileContext): CompiledVirtualHost {
  const routes = vh.routes.map((r, i) => compileRoute(r, i, ctx));
  return { hostname: vh.hostname, routes, pathIndex: buildPathIndex(routes) };
}

function compileRoute(r: Route, index: number, ctx: CompileContext): CompiledRoute {
  const dead = (why: string) => ctx.warn(`route ${r.name}: ${why}; it never matches`);
  let pathType: CompiledRoute["pathType"] = PATH_EXACT;
  let pathValue = r.match.path.value;
  let pathRegex: ValueRegex | undefined;
  if (r.match.path.type === "Prefix") {
    pathType = PATH_PREFIX;
    pathValue = pathValue.replace(/\/+$/, "");
  } else if (r.match.path.type === "RegularExpression") {
    pathRegex = compileAnchored(pathValue, { ignoreCase: r.match.path.ignoreCase === true });
    pathType = pathRegex ? PATH_REGEX : PATH_NEVER;
    if (!pathRegex) dead(`path regex ${JSON.stringify(pathValue)} does not compile`);
  }
  const headers = compileMatchers(r.match.headers, () => {
    pathType = PATH_NEVER;
    dead("a header regex does not compile");
  });
  const query = compileMatchers(r.match.queryParams, () => {
    pathType = PATH_NEVER;
    dead("a query parameter regex does not compile");
  });
  const filters = compileFilterChain(r.filters, ctx.backends, ctx.models, ctx.warn);
  let action = compileAction(r, filters, ctx);
  const broken = filters.error ?? prefixModifierProblem(r);
  if (broken !== undefined) {
    ctx.warn(`route ${r.name}: ${broken}; it answers 500`);
    action = {
      kind: "DirectResponse",
      status: 500,
      body: "Internal Server Error\n",
      contentType: PLAIN_TEXT,
      error: broken,
    };
  }
  const ipAccess = compileIPAccess(r.ipAccess);
  return {
    index,
    name: r.name,
    source: r.source,
    pathType,
    pathValue,
    pathRegex,
    method: r.match.method,
    headers,
    query,
    filters,
    action,
    timeouts: r.timeouts,
    retry: r.retry,
    ipAccess,
    addressGrants: r.auth?.satisfy === "Any" && r.auth.failClosed === undefined && hasAllowList(ipAccess),
    clientCertificate: compileClientCertificate(r.clientCertificate),
    auth: r.auth,
    rateLimit: r.rateLimit,
    // The WAF engine is loaded (and its rule set built) here, the first time a route asks for one.
    waf: r.waf === undefined ? undefined : compileWaf(r.name, r.waf, ctx.warn),
    cors: hasCors(r),
    logShare: r.accessLog === false ? 0 : r.accessLogSample,
    responseBandwidth: r.responseBandwidth,
    requestBodyMaxBytes: r.requestBodyMaxBytes,
    clientZone: r.clientConcurrency === undefined ? undefined : clientZoneFor(r.clientConcurrency),
    errorPages:
      r.errorPages === undefined
        ? undefined
        : compileErrorPages(r.name, r.errorPages, ctx.backends, ctx.warn),
  };
}

/** The header and query conditions of every route without any: a table holds one per route. */
const noMatchers: readonly ValueMatcher[] = Object.freeze([]);

function compileMatchers(
  list: readonly Parameters<typeof compileValueMatcher>[0][],
  onBad: () => void,
): readonly ValueMatcher[] {
  if (list.length === 0) return noMatchers;
  const out: ValueMatcher[] = [];
  for (const m of list) {
    const c = compileValueMatcher(m);
    if (c) out.push(c);
    else onBad();
  }
  return out;
}

function compileAction(r: Route, routeFilters: FilterChain, ctx: CompileContext): CompiledAction {
  const a = r.action;
  switch (a.kind) {
    case "Forward": {
      const choices = a.backends.map((wb) => {
        // An invalid reference is never forwarded, so its own filters never run and are not compiled.
        if (wb.failStatus !== undefined) {
          const value: BackendChoice = {
            backend: undefined,
            backendId: wb.backendId,
            filters: routeFilters,
            failStatus: wb.failStatus,
          };
          return { weight: wb.weight, value };
        }
        const own = compileFilterChain(wb.filters, ctx.backends, ctx.models, ctx.warn);
        if (!ctx.backends.has(wb.backendId))
          ctx.warn(`route ${r.name}: unknown backend ${wb.backendId} (503)`);
        if (own.error)
          ctx.warn(`route ${r.name}: backend ${wb.backendId}: ${own.error}; its requests answer 500`);
        const value: BackendChoice = {
          backend: ctx.backends.get(wb.backendId),
          backendId: wb.backendId,
          filters: joinChains(routeFilters, own),
          failStatus: undefined,
        };
        return { weight: wb.weight, value };
      });
      const pick = weightedPicker(choices);
      const values = choices.map((c) => c.value);
      const b = a.balancing ?? ROUND_ROBIN;
      // A Service's own algorithm (a BackendTrafficPolicy's loadBalancer) needs a balancer too.
      const own = values.some((v) => (v.backend?.balancing?.algorithm ?? "RoundRobin") !== "RoundRobin");
      // Round robin without a session keeps today's path: no balancer, nothing added per request.
      if (b.algorithm === "RoundRobin" && b.session === undefined && !own)
        return { kind: "Forward", pick, choices: values };
      const weights = choices.map((c) => c.weight);
      return {
        kind: "Forward",
        pick,
        choices: values,
        balancer: new RouteBalancer(b, values, pick, weights),
      };
    }
    case "Redirect": {
      const location = a.location === undefined ? undefined : parseLocationTemplate(a.location);
      if (location !== undefined && !location.ok) {
        const why = `redirect location ${JSON.stringify(a.location)}: ${location.message}`;
        ctx.warn(`route ${r.name}: ${why}; its requests answer 500`);
        return {
          kind: "DirectResponse",
          status: 500,
          body: "Internal Server Error\n",
          contentType: PLAIN_TEXT,
          error: why,
        };
      }
      return {
        kind: "Redirect",
        scheme: a.scheme,
        hostname: a.hostname,
        port: a.port,
        path: a.path === undefined ? undefined : compilePathModifier(a.path),
        statusCode: a.statusCode,
        ...(a.stripTrailingSlash === true ? { stripTrailingSlash: true } : {}),
        ...(a.writeDefaultPort === true ? { writeDefaultPort: true } : {}),
        ...(location !== undefined ? { location: location.parts } : {}),
      };
    }
    case "DirectResponse":
      return {
        kind: "DirectResponse",
        status: a.status,
        body: a.body ?? "",
        contentType: a.contentType ?? PLAIN_TEXT,
      };
    default: {
      const why = `unsupported action kind ${JSON.stringify((a as { kind?: unknown }).kind)}`;
      return {
        kind: "DirectResponse",
        status: 500,
        body: "Internal Server Error\n",
        contentType: PLAIN_TEXT,
        error: why,
      };
    }
  }
}

/** ReplacePrefixMatch needs a matched prefix: only Prefix (and, trivially, Exact) paths have one. */
function prefixModifierProblem(r: Route): string | undefined {
  if (r.match.path.type !== "RegularExpression") return undefined;
  const usesPrefix =
    (r.action.kind === "Redirect" && r.action.path?.type === "ReplacePrefixMatch") ||
    [...r.filters, ...(r.action.kind === "Forward" ? r.action.backends.flatMap((b) => b.filters) : [])].some(
      (f) => f.kind === "URLRewrite" && f.path?.type === "ReplacePrefixMatch",
    );
  return usesPrefix ? "ReplacePrefixMatch on a regular-expression path match" : undefined;
}

/** Every request of the route passes a CORS filter: one on the route, or one on every backend. */
function hasCors(r: Route): boolean {
  if (r.filters.some((f) => f.kind === "CORS")) return true;
  return (
    r.action.kind === "Forward" &&
    r.action.backends.length > 0 &&
    r.action.backends.every((b) => b.filters.some((f) => f.kind === "CORS"))
  );
}
