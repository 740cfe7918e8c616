import type { Backend, Problem, Route, RouteAction, VirtualHost } from "../../model/index.ts";
import { type BackendIssue, type BackendLookup, lookupServiceBackend } from "../common/backends.ts";
import type { HostPattern } from "../common/host-patterns.ts";
import { emptyList } from "../common/objects.ts";
import { internalProblem, problem } from "../common/problems.ts";
import type { SnapshotIndex } from "../common/snapshot-index.ts";
import { compareRoutePrecedence, compareStrings } from "../common/sort.ts";
import type { RouteCandidate } from "./ingress.ts";

export interface BuiltHosts {
  /** Sorted by hostname; each host's routes in precedence order. */
  readonly virtualHosts: VirtualHost[];
  /** Every backend a route points at, keys sorted. */
  readonly backends: Record<string, Backend>;
  readonly problems: Problem[];
}

/**
 * Turn the surviving candidates into routes grouped by virtual host, resolving each backend once per
 * (namespace, service, port) and reporting an unusable backend on every object that refers to it.
 * A route whose backend is broken stays: the data plane answers 503, which tells the client more than a
 * 404 from a missing route would.
 */
export function buildVirtualHosts(candidates: readonly RouteCandidate[], index: SnapshotIndex): BuiltHosts {
  const lookups = new Map<string, BackendLookup>();
  const backends = new Map<string, Backend>();
  // Routes to the same backend share their action (and lists): the model is never changed downstream.
  const forwards = new Map<string, RouteAction>();
  const problems: Problem[] = [];
  const hosts = new Map<string, { host: HostPattern; entries: { c: RouteCandidate; route: Route }[] }>();
  for (const c of candidates) {
    try {
      const ns = c.ref.namespace;
      const port = c.backend.port;
      const key = `${ns}\0${c.backend.serviceName}\0${"number" in port ? port.number : `name:${port.name}`}`;
      let lookup = lookups.get(key);
      if (!lookup) {
        lookup = lookupServiceBackend(index, ns, c.backend.serviceName, c.backend.port);
        lookups.set(key, lookup);
      }
      if (lookup.issue) problems.push(issueProblem(c, lookup.issue));
      problems.push(...lookup.sideProblems);
      backends.set(lookup.backend.id, lookup.backend);
      let action = forwards.get(lookup.backend.id);
      if (action === undefined) {
        action = {
          kind: "Forward",
          backends: [{ backendId: lookup.backend.id, weight: 1, filters: emptyList }],
        };
        forwards.set(lookup.backend.id, action);
      }
      const route: Route = {
        name: c.name,
        source: c.ref,
        match: { path: c.path, headers: emptyList, queryParams: emptyList },
        filters: emptyList,
        action,
      };
      const group = hosts.get(c.host.hostname);
      if (group) group.entries.push({ c, route });
      else hosts.set(c.host.hostname, { host: c.host, entries: [{ c, route }] });
    } catch (err) {
      problems.push(internalProblem(c.ref, err));
    }
  }
  const virtualHosts = [...hosts.values()]
    .sort((a, b) => compareStrings(a.host.hostname, b.host.hostname))
    .map(({ host, entries }) => ({
      hostname: host.hostname,
      match: host.match,
      routes: entries.sort((a, b) => compareRoutePrecedence(a.c, b.c)).map((e) => e.route),
    }));
  const sortedBackends: Record<string, Backend> = {};
  for (const id of [...backends.keys()].sort(compareStrings))
    sortedBackends[id] = backends.get(id) as Backend;
  return { virtualHosts, backends: sortedBackends, problems };
}

function issueProblem(c: RouteCandidate, issue: BackendIssue): Problem {
  const port = c.backend.port;
  const field =
    issue.subject === "service"
      ? `${c.backend.field}.service.name "${c.backend.serviceName}"`
      : "number" in port
        ? `${c.backend.field}.service.port.number ${port.number}`
        : `${c.backend.field}.service.port.name "${port.name}"`;
  return problem(c.ref, issue.reason, `${field}: ${issue.message}`);
}
