/**
 * `--default-backend-service ns/name`, ingress-nginx's controller flag of that name: requests on the
 * Ingress listeners that match no Ingress host or path go to that Service rather than to the gateway's
 * 404, as ingress-nginx sends its catch-all server and each host's unmatched paths to its default
 * backend. Placed as default-backend.ts places an Ingress's `spec.defaultBackend`, at the lowest
 * priority (`Prefix /`, after every rule route): on the catch-all host `*` and on every host an Ingress
 * names, except where a rule already serves `Prefix /` or an Ingress's own default backend is placed
 * (that one is the host's, as in ingress-nginx). The Service's first TCP port is used, as ingress-nginx
 * uses its first port (and error-pages.ts the default-backend annotation's). The request is passed on as it came (no X-Code fields: ingress-nginx adds those only for
 * `custom-http-errors`). A Service that is not there places nothing and is reported (the 404 stays); one
 * without ready endpoints is placed and reported: its requests get 503, as any Service's without pods.
 * Gateway API listeners are not touched: there, a request no route matches is a 404 by the spec.
 */
import type { Problem, SourceRef } from "../../model/index.ts";
import { anyHost } from "../common/host-patterns.ts";
import { defaultBackendServiceRouteName } from "../common/names.ts";
import { arrayOf } from "../common/objects.ts";
import { problem } from "../common/problems.ts";
import type { SnapshotIndex } from "../common/snapshot-index.ts";
import type { IngressTranslation, RouteCandidate } from "./ingress.ts";

export function placeDefaultBackendService(
  named: string | undefined,
  translations: readonly IngressTranslation[],
  placed: readonly RouteCandidate[],
  index: SnapshotIndex,
): { candidates: RouteCandidate[]; problems: Problem[] } {
  if (named === undefined) return { candidates: [], problems: [] };
  const [namespace = "", name = ""] = named.split("/");
  const ref: SourceRef = { kind: "Service", namespace, name };
  const svc = index.services.get(named);
  const first = arrayOf(svc?.spec?.ports).find((p) => (p.protocol ?? "TCP") === "TCP");
  if (svc === undefined || first === undefined) {
    const why = svc === undefined ? "not found" : "has no TCP port";
    const message = `--default-backend-service ${named}: ${why}; requests no Ingress matches get 404`;
    return { candidates: [], problems: [problem(ref, "BackendNotFound", message, "warning")] };
  }
  const problems: Problem[] = [];
  const ready = (index.slicesByService.get(named) ?? []).some((s) =>
    (s.endpoints ?? []).some((e) => e.conditions?.ready !== false),
  );
  if (!ready)
    problems.push(
      problem(
        ref,
        "NoEndpoints",
        `--default-backend-service ${named}: no ready endpoints; requests no Ingress matches get 503 until it has some`,
        "warning",
      ),
    );
  // Hosts where a rule serves `Prefix /` or an Ingress's default backend sits already keep theirs.
  const taken = new Set(
    placed
      .filter((c) => c.isDefault || (c.path.type === "Prefix" && c.path.value === "/"))
      .map((c) => c.host.hostname),
  );
  const hosts = new Map([[anyHost.hostname, anyHost]]);
  for (const t of translations) for (const h of t.hosts) if (!hosts.has(h.hostname)) hosts.set(h.hostname, h);
  const candidates: RouteCandidate[] = [];
  for (const host of hosts.values()) {
    if (taken.has(host.hostname)) continue;
    candidates.push({
      name: defaultBackendServiceRouteName(),
      ref,
      field: "--default-backend-service",
      label: "default backend",
      host,
      path: { type: "Prefix", value: "/" },
      isDefault: true,
      // After every Ingress's claim, whatever their age.
      source: { namespace: "\uffff", name, createdMs: Number.MAX_SAFE_INTEGER },
      ruleIndex: -1,
      pathIndex: -1,
      backend: { serviceName: name, port: { number: first.port }, field: "--default-backend-service" },
    });
  }
  return { candidates, problems };
}
