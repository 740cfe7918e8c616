/**
 * `gatehouse routes`: what a set of manifests (or a cluster, read once) serves, one line per route, in the
 * order a request meets them: listener, host, match, what answers, and the object it came from. It is
 * `translate` for reading by eye (`kubectl gatehouse routes`); problems are counted on stderr and left to
 * `translate`, which prints them. With `--host`/`--path` it answers which route serves that request.
 */
import type { GatewayModel, Problem, Route, RouteAction } from "../model/index.ts";
import { type TranslateOptions, translate } from "../translate/translate.ts";
import type { LoadedInput } from "./input.ts";

/** `gatehouse routes -f FILE... | --kube`: the table on stdout; the exit code is the input's (input.ts). */
export async function runRoutes(
  input: LoadedInput,
  options: Partial<TranslateOptions>,
  explain?: (model: GatewayModel) => { readonly text: string; readonly served: boolean },
): Promise<number> {
  const result = translate(input.snapshot, options);
  // With --host/--path (route-explain.ts): the explanation instead of the table.
  const answer = explain?.(result.model);
  await Bun.write(Bun.stdout, answer === undefined ? routeTable(result.model) : answer.text);
  for (const note of input.notes) process.stderr.write(`${note}\n`);
  const summary = problemSummary([...input.problems, ...result.problems]);
  if (summary !== undefined) process.stderr.write(summary);
  // A request no route serves is an answer a script may want to test for.
  return input.exitCode !== 0 || answer === undefined || answer.served ? input.exitCode : 1;
}

/**
 * `gatehouse routes --admin URL`: the same answers about the model a running gateway serves, read from its
 * admin port's `/debug/model` (secrets are redacted there, which matching never reads). Exit 1 when the
 * gateway cannot be read.
 */
export async function runRoutesFromAdmin(
  admin: string,
  explain?: (model: GatewayModel) => { readonly text: string; readonly served: boolean },
): Promise<number> {
  let model: GatewayModel;
  try {
    const res = await fetch(`${admin}/debug/model`, { signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    if (!res.ok || text.startsWith("# no model"))
      throw new Error(`${res.status} ${text.trim().slice(0, 200)}`);
    model = (await import("yaml")).parse(text) as GatewayModel;
    if (!Array.isArray(model?.listeners)) throw new Error("the answer is not a route model");
  } catch (err) {
    process.stderr.write(`gatehouse routes: cannot read ${admin}/debug/model: ${(err as Error).message}\n`);
    return 1;
  }
  const answer = explain?.(model);
  await Bun.write(Bun.stdout, answer === undefined ? routeTable(model) : answer.text);
  return answer === undefined || answer.served ? 0 : 1;
}

const HEADINGS = ["LISTENER", "HOST", "MATCH", "ANSWER", "FROM"] as const;

/** One row per route; passthrough (TLSRoute, ssl-passthrough) listeners list their SNI routes. */
export function routeRows(model: GatewayModel): string[][] {
  const rows: string[][] = [];
  for (const l of model.listeners) {
    const where = `${l.name} (${l.protocol.toLowerCase()} :${l.port})`;
    for (const vh of l.virtualHosts) {
      for (const r of vh.routes)
        rows.push([where, vh.hostname, matchText(r), actionText(r.action), fromText(r)]);
    }
  }
  for (const l of model.passthroughListeners ?? []) {
    const where = `${l.name} (tls passthrough :${l.port})`;
    for (const r of l.routes) {
      const backends = r.backends.map((b) => `${b.backendId}${weightText(b.weight, r.backends)}`).join(", ");
      const names = r.hostnames.map((h) => h.hostname).join(", ") || "*";
      rows.push([where, names, "SNI", `→ ${backends || "nothing"}`, fromText(r)]);
    }
  }
  return rows;
}

export function matchText(r: Route): string {
  const m = r.match;
  const path =
    m.path.type === "Prefix"
      ? `${m.path.value}*`
      : m.path.type === "Exact"
        ? m.path.value
        : `~${m.path.ignoreCase ? "*" : ""} ${m.path.value}`;
  const parts = [m.method ? `${m.method} ${path}` : path];
  for (const h of m.headers) parts.push(`${h.name}${h.type === "Exact" ? "=" : "~"}${h.value}`);
  for (const q of m.queryParams) parts.push(`?${q.name}${q.type === "Exact" ? "=" : "~"}${q.value}`);
  return parts.join(" ");
}

function weightText(weight: number, all: readonly { readonly weight: number }[]): string {
  if (all.length < 2) return weight === 0 ? " (0%)" : "";
  const total = all.reduce((n, b) => n + b.weight, 0);
  return ` (${total === 0 ? 0 : Math.round((weight / total) * 1000) / 10}%)`;
}

export function actionText(a: RouteAction): string {
  switch (a.kind) {
    case "Forward":
      return a.backends.length === 0
        ? "500 (no backend)"
        : `→ ${a.backends.map((b) => `${b.backendId}${weightText(b.weight, a.backends)}`).join(", ")}`;
    case "Redirect":
      return `${a.statusCode} → ${a.location ?? [a.scheme ?? "", a.hostname ?? "", a.port ?? "", a.path?.value ?? ""].filter((p) => p !== "").join(" ")}`;
    case "DirectResponse":
      return `${a.status}${a.body ? ` "${a.body.length > 30 ? `${a.body.slice(0, 30)}…` : a.body}"` : ""}`;
  }
}

function fromText(r: { readonly source: { kind: string; namespace: string; name: string } }): string {
  const s = r.source;
  return `${s.kind} ${s.namespace ? `${s.namespace}/` : ""}${s.name}`;
}

/** The rows as an aligned table with headings (the last column is not padded). */
export function routeTable(model: GatewayModel): string {
  const rows = [[...HEADINGS], ...routeRows(model)];
  const widths = HEADINGS.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")
    .concat("\n");
}

/** The stderr line about problems (undefined: none worth saying; info-level ones are not counted). */
export function problemSummary(problems: readonly Problem[]): string | undefined {
  const n = problems.filter((p) => p.severity !== "info").length;
  return n === 0
    ? undefined
    : `gatehouse routes: ${n} problem${n === 1 ? "" : "s"}; \`gatehouse translate\` with the same input lists them\n`;
}
