/**
 * `gatehouse routes --host H --path P`: which route serves that request, and why not the others. The
 * answer comes from the data plane's own code, not a second reading of the rules: the model is compiled
 * (`compile`), listeners sharing an address and port are merged as the server merges them
 * (`groupListeners`, listener isolation), then `findVirtualHost` and `routeMatches` decide, and each
 * route of the chosen virtual host is checked condition by condition to say which one fails.
 */
import type { GatewayModel, Route } from "../model/index.ts";
import { compile } from "../proxy/compile.ts";
import { groupListeners } from "../proxy/listeners/listener-merge.ts";
import { findVirtualHost, normaliseHost } from "../proxy/match/host.ts";
import { findRoute, pathMatches } from "../proxy/match/routes.ts";
import { firstQueryValue, valueMatches } from "../proxy/match/values.ts";
import { parseRequestTarget } from "../proxy/request/request-target.ts";
import type { CompiledRoute, CompiledVirtualHost, ListenerTable } from "../proxy/table.ts";
import { actionText, matchText } from "./routes.ts";

/** The request asked about. */
export interface RouteQuery {
  readonly host: string;
  /** Path, optionally with `?query`. */
  readonly path: string;
  readonly method: string;
  /** Lower-case names. */
  readonly headers: ReadonlyMap<string, string>;
}

/**
 * Take `--host`, `--path`, `--method`, `--header NAME=VALUE` and `--admin URL` (a running gateway's admin
 * port, read instead of files) out of the arguments.
 */
export function routeQueryArgs(
  args: readonly string[],
): { query?: RouteQuery; admin?: string; rest: string[] } | string {
  const rest: string[] = [];
  const headers = new Map<string, string>();
  let host: string | undefined;
  let path: string | undefined;
  let method = "GET";
  let admin: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const eq = arg.indexOf("=");
    const name = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    if (!["--host", "--path", "--method", "--header", "--admin"].includes(name)) {
      rest.push(arg);
      continue;
    }
    const value = eq > 0 && arg.startsWith("--") ? arg.slice(eq + 1) : args[++i];
    if (value === undefined) return `${name} needs a value`;
    if (name === "--admin") admin = value;
    else if (name === "--host") host = value;
    else if (name === "--path") path = value;
    else if (name === "--method") method = value.toUpperCase();
    else {
      const colon = value.search(/[=:]/);
      if (colon <= 0) return `--header "${value}" is not NAME=VALUE`;
      headers.set(value.slice(0, colon).trim().toLowerCase(), value.slice(colon + 1).trim());
    }
  }
  if (admin !== undefined && !/^https?:\/\/[^/]/.test(admin))
    return `--admin "${admin}" is not an http(s) URL`;
  const from = admin === undefined ? {} : { admin: admin.replace(/\/+$/, "") };
  if (host === undefined && path === undefined)
    return method !== "GET" || headers.size > 0
      ? "--method and --header go with --host or --path"
      : { ...from, rest };
  const p = path ?? "/";
  if (!p.startsWith("/")) return `--path "${p}" must start with /`;
  return { query: { host: host ?? "", path: p, method, headers }, ...from, rest };
}

/** The explanation, one block per listener socket, and whether any listener serves the request. */
export function explainRoute(q: RouteQuery, model: GatewayModel): { text: string; served: boolean } {
  // Read only: no active health check may probe anyone's endpoints from here.
  const table = compile(model, { probes: false });
  const warnings: string[] = [];
  const sockets = groupListeners(table.listeners, "", (w) => warnings.push(w));
  const models = modelRoutes(model);
  const host = normaliseHost(q.host);
  const out = [`${q.method} ${q.host || "(no host)"}${q.path}`];
  // The path as both fronts route on it: escapes normalised, runs of / merged; refused ones get 400.
  const target = parseRequestTarget(q.path);
  if (target === undefined)
    return {
      text: `${out[0]}\n\nthe gateway answers 400: the path is refused before routing\n`,
      served: false,
    };
  const { path, query } = target;
  if (path !== q.path.split("?")[0]) out.push(`(routed as ${path})`);
  const headers = { get: (n: string) => q.headers.get(n) ?? (n === "host" ? q.host : null) };
  let served = 0;
  for (const [key, lt] of sockets) {
    const vh = findVirtualHost(lt.hosts, host);
    out.push("", `${lt.name} (${lt.protocol.toLowerCase()} ${key.replace(/^:/, "*:")})`);
    if (vh === undefined) {
      out.push(`  no virtual host takes "${host}": 404`);
      continue;
    }
    out.push(`  host "${host}" → virtual host ${vh.hostname}${hostWhy(lt, vh, host)}`);
    const winner = findRoute(vh, path, q.method, headers, query);
    if (winner === undefined) out.push("  no route of it matches: 404");
    else served++;
    for (const r of vh.routes) {
      const m = models.get(r.name);
      const what = `${r.name}  ${m ? matchText(m) : ""}`;
      if (r === winner) out.push(`  ✔ ${what}  serves it: ${m ? actionText(m.action) : ""} (${fromText(r)})`);
      else {
        const why = failedCondition(r, path, q.method, headers, query);
        out.push(`  ✘ ${what}  ${why ?? `matches too, but ${winner?.name} comes first in precedence`}`);
      }
    }
    const others = otherHosts(lt, vh);
    if (others > 0)
      out.push(
        `  (${others === 1 ? "1 other virtual host on this listener does" : `${others} other virtual hosts on this listener do`} not take this host)`,
      );
  }
  if (sockets.size === 0) out.push("", "no HTTP listener");
  out.push(
    "",
    served === 0
      ? "no listener serves this request"
      : `served on ${served} listener${served === 1 ? "" : "s"}`,
  );
  return { text: `${out.join("\n")}\n`, served: served > 0 };
}

/** Why the lookup picked `vh`: exact name, the longest wildcard, or the catch-all, and what lost to it. */
function hostWhy(lt: ListenerTable, vh: CompiledVirtualHost, host: string): string {
  const wildcards = [...lt.hosts.oneLabel, ...lt.hosts.anyLabels]
    .filter(([suffix, v]) => v !== vh && (host.endsWith(`.${suffix}`) || host === suffix))
    .map(([, v]) => v.hostname);
  const lost = [...wildcards, ...(lt.hosts.any !== undefined && lt.hosts.any !== vh ? ["*"] : [])];
  const how = lt.hosts.exact.get(host) === vh ? "exact name" : vh === lt.hosts.any ? "catch-all" : "wildcard";
  return ` (${how}${lost.length > 0 ? `; more specific than ${lost.join(", ")}` : ""})`;
}

function otherHosts(lt: ListenerTable, vh: CompiledVirtualHost): number {
  const all = new Set([
    ...lt.hosts.exact.values(),
    ...lt.hosts.oneLabel.values(),
    ...lt.hosts.anyLabels.values(),
  ]);
  if (lt.hosts.any !== undefined) all.add(lt.hosts.any);
  all.delete(vh);
  return all.size;
}

/** The first condition of `r` the request fails, in the order the matcher checks them; undefined: none. */
function failedCondition(
  r: CompiledRoute,
  path: string,
  method: string,
  headers: { get(n: string): string | null },
  query: string,
): string | undefined {
  if (!pathMatches(r, path)) return `path ${path} does not match`;
  if (r.method !== undefined && r.method !== method) return `method ${method} is not ${r.method}`;
  for (const h of r.headers)
    if (!valueMatches(h, headers.get(h.name)))
      return headers.get(h.name) === null ? `needs header ${h.name}` : `header ${h.name} does not match`;
  for (const p of r.query)
    if (!valueMatches(p, firstQueryValue(query, p.name)))
      return firstQueryValue(query, p.name) === undefined
        ? `needs query parameter ${p.name}`
        : `query parameter ${p.name} does not match`;
  return undefined;
}

function modelRoutes(model: GatewayModel): Map<string, Route> {
  const out = new Map<string, Route>();
  for (const l of model.listeners)
    for (const v of l.virtualHosts) for (const r of v.routes) if (!out.has(r.name)) out.set(r.name, r);
  return out;
}

function fromText(r: CompiledRoute): string {
  const s = r.source;
  return `${s.kind} ${s.namespace ? `${s.namespace}/` : ""}${s.name}`;
}
