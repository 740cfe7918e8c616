/**
 * Builders for hand-written GatewayModels in the proxy's unit and integration tests: defaults for
 * everything a test does not care about, so each test shows only what it checks.
 */
import type {
  Backend,
  Endpoint,
  Filter,
  GatewayModel,
  Listener,
  Route,
  RouteAction,
  RouteMatch,
  SNIRoute,
  VirtualHost,
} from "../../model/index.ts";

export const testSource = { kind: "HTTPRoute", namespace: "test", name: "test" } as const;

export function match(
  path: string,
  type: RouteMatch["path"]["type"] = "Prefix",
  extra: Partial<RouteMatch> = {},
): RouteMatch {
  return { path: { type, value: path }, headers: [], queryParams: [], ...extra };
}

export function forwardTo(
  ...backends: (string | { id: string; weight: number; filters?: Filter[] })[]
): RouteAction {
  return {
    kind: "Forward",
    backends: backends.map((b) =>
      typeof b === "string"
        ? { backendId: b, weight: 1, filters: [] }
        : { backendId: b.id, weight: b.weight, filters: b.filters ?? [] },
    ),
  };
}

export function route(name: string, m: RouteMatch, action: RouteAction, extra: Partial<Route> = {}): Route {
  return { name, source: testSource, match: m, filters: [], action, ...extra };
}

export function vhost(hostname: string, routes: Route[], type?: VirtualHost["match"]): VirtualHost {
  const m = type ?? (hostname === "*" ? "Any" : hostname.startsWith("*.") ? "WildcardAnyLabels" : "Exact");
  return { hostname, match: m, routes };
}

export function listener(virtualHosts: VirtualHost[], extra: Partial<Listener> = {}): Listener {
  return {
    name: "test/http",
    address: "127.0.0.1",
    port: 0,
    protocol: "HTTP",
    source: testSource,
    virtualHosts,
    ...extra,
  };
}

export function backend(id: string, endpoints: (number | Endpoint)[], extra: Partial<Backend> = {}): Backend {
  return {
    id,
    service: { namespace: "test", name: id, port: 80 },
    protocol: "http",
    endpoints: endpoints.map((e) => (typeof e === "number" ? { address: "127.0.0.1", port: e } : e)),
    ...extra,
  };
}

export function model(listeners: Listener[], backends: Backend[] = []): GatewayModel {
  return { listeners, backends: Object.fromEntries(backends.map((b) => [b.id, b])) };
}

/**
 * A TCPRoute or UDPRoute as translation places it on its listener (every name: `Any`), for model-level
 * tests of TCP and UDP listeners.
 */
export function streamRoute(
  kind: "TCPRoute" | "UDPRoute",
  name: string,
  backends: SNIRoute["backends"],
): SNIRoute {
  return {
    name: `${kind.toLowerCase()}/test/${name}`,
    source: { kind, namespace: "test", name },
    hostnames: [{ hostname: "*", match: "Any" }],
    backends,
  };
}
