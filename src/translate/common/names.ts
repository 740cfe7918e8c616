/**
 * Stable names. Routes and backends are named after the object and position they came from, so a log
 * line, a metric label or a golden diff can point at the YAML that produced them.
 */

/** `ingress/<ns>/<name>/rule/<i>/path/<j>`: one route per Ingress path. */
export function ingressPathRouteName(namespace: string, name: string, rule: number, path: number): string {
  return `ingress/${namespace}/${name}/rule/${rule}/path/${path}`;
}

/**
 * `ingress/<ns>/<name>/default-backend`. The same name is used on every virtual host the default backend
 * is placed on: it is one piece of configuration, so its metrics should add up under one name.
 */
export function ingressDefaultBackendRouteName(namespace: string, name: string): string {
  return `ingress/${namespace}/${name}/default-backend`;
}

/**
 * `<ns>/<service>:<port>` with the Service port number. When the port cannot be resolved to a number
 * (unknown Service or port name) the requested name stands in, so distinct broken references stay distinct.
 */
export function backendId(namespace: string, service: string, port: number | string): string {
  return `${namespace}/${service}:${port}`;
}
