/**
 * The Ingress routes of the model as HTTPRoutes: for each Ingress, the routes it serves on each host of
 * the default listeners, in the model's order, one rule per route (rules.ts). Hosts that serve the same
 * rules on the same kinds of listener share one HTTPRoute; others get `-2`, `-3`… (names.ts), as do parts
 * past HTTPRoute's 16 rules or 16 hostnames.
 */
import type { GatewayModel, Listener, Route, SourceRef, VirtualHost } from "../model/index.ts";
import { defaultBackendServiceRouteName } from "../translate/common/names.ts";
import { compareStrings } from "../translate/common/sort.ts";
import type { Findings } from "./findings.ts";
import type { GatewayPlan } from "./gateway.ts";
import { NamePicker, SOURCE_ANNOTATION } from "./names.ts";
import type { RouteFilters } from "./route-filters.ts";
import { convertRule } from "./rules.ts";

type Json = Record<string, unknown>;

/** One HTTPRoute written, with the model routes its rules came from (for the policies). */
export interface ConvertedRoute {
  readonly ingress: SourceRef;
  readonly name: string;
  readonly object: Json;
  /** The model route of each rule, in rule order. */
  readonly routes: readonly Route[];
}

/** HTTPRoute limits (CRD MaxItems) that make convert split an Ingress's routes. */
const limits = { rules: 16, hostnames: 16 };

interface HostEntry {
  readonly hostname: string;
  readonly match: VirtualHost["match"];
  readonly sections: Set<string>;
}

interface Group {
  readonly ingress: SourceRef;
  readonly rules: Json[];
  readonly routes: Route[];
  readonly hosts: HostEntry[];
}

/** What one Ingress serves on one host: its routes there, per listener protocol, and that listener's section. */
interface IngressHost {
  readonly ingress: SourceRef;
  readonly vh: VirtualHost;
  readonly byProtocol: Map<string, { section: string; routes: Route[] }>;
}

/** Reasons for what a rule leaves out, with the hosts and paths each concerns (one finding per reason). */
type Lost = Map<string, { ingress: SourceRef; message: string; paths: Set<string> }>;

export function convertHTTPRoutes(
  model: GatewayModel,
  ingressListeners: readonly Listener[],
  plan: GatewayPlan,
  findings: Findings,
  ingressNames: readonly string[],
  routeFilters: RouteFilters | undefined,
): ConvertedRoute[] {
  const groups = new Map<string, Group>();
  const lost: Lost = new Map();
  for (const { ingress, vh, byProtocol } of ingressHosts(ingressListeners, plan, findings)) {
    if (vh.match === "WildcardOneLabel")
      findings.add(
        ingress,
        `host ${vh.hostname}: the Ingress matched exactly one label in place of "*", a Gateway API hostname matches one or more`,
      );
    // Protocols with the same rules share a group, so a redirect on HTTP never joins HTTPS rules.
    const contents = new Map<
      string,
      { sections: string[]; kinds: string[]; rules: Json[]; routes: Route[] }
    >();
    for (const [kind, { section, routes }] of byProtocol) {
      const { rules, kept } = renderRules(routes, model, ingress, vh, lost, routeFilters);
      if (rules.length === 0) continue;
      const sig = JSON.stringify([rules, kept.map(guardSignature)]);
      const c = contents.get(sig) ?? { sections: [], kinds: [], rules, routes: kept };
      c.sections.push(section);
      c.kinds.push(kind);
      contents.set(sig, c);
    }
    for (const [sig, c] of contents) {
      const any = vh.match === "Any" ? "any" : "named";
      const key = `${ingress.namespace}/${ingress.name}\n${any}\n${c.kinds.sort().join(",")}\n${sig}`;
      const g = groups.get(key) ?? { ingress, rules: c.rules, routes: c.routes, hosts: [] };
      g.hosts.push({ hostname: vh.hostname, match: vh.match, sections: new Set(c.sections) });
      groups.set(key, g);
    }
  }
  for (const { ingress, message, paths } of lost.values()) {
    const shown = [...paths].sort(compareStrings);
    findings.add(
      ingress,
      `${message}; not kept for ${shown.slice(0, 5).join(", ")}${shown.length > 5 ? ` and ${shown.length - 5} more` : ""}`,
    );
  }
  return namedRoutes([...groups.values()], plan, ingressNames);
}

/** The Ingress routes of the listeners, per Ingress and host; a host no listener here serves is a note. */
function ingressHosts(listeners: readonly Listener[], plan: GatewayPlan, findings: Findings): IngressHost[] {
  const hosts = new Map<string, IngressHost>();
  for (const listener of listeners) {
    for (const vh of listener.virtualHosts) {
      const section = plan.sectionFor(listener, vh.hostname);
      const byIngress = new Map<string, { ingress: SourceRef; routes: Route[] }>();
      for (const route of vh.routes) {
        if (route.name === defaultBackendServiceRouteName())
          findings.add(
            route.source,
            "--default-backend-service: requests no Ingress host or path matches go to this Service; Gateway API listeners answer them 404 (no HTTPRoute catches what other routes' hosts leave unmatched)",
          );
        if (route.source.kind !== "Ingress") continue;
        const key = `${route.source.namespace}/${route.source.name}`;
        const entry = byIngress.get(key) ?? { ingress: route.source, routes: [] };
        entry.routes.push(route);
        byIngress.set(key, entry);
      }
      for (const [key, { ingress, routes }] of byIngress) {
        if (section === undefined) {
          findings.add(
            ingress,
            `host ${vh.hostname} is not served over HTTPS: it has no spec.tls certificate and no --default-certificate was given (Ingress served it with the first certificate)`,
            "note",
          );
          continue;
        }
        const host = hosts.get(`${key}\n${vh.hostname}`) ?? { ingress, vh, byProtocol: new Map() };
        host.byProtocol.set(listener.protocol, { section, routes });
        hosts.set(`${key}\n${vh.hostname}`, host);
      }
    }
  }
  return [...hosts.values()];
}

/** The rules of one host's routes, and the routes that have one (a route whose match cannot be written has none). */
function renderRules(
  routes: readonly Route[],
  model: GatewayModel,
  ingress: SourceRef,
  vh: VirtualHost,
  lost: Lost,
  routeFilters: RouteFilters | undefined,
): { rules: Json[]; kept: Route[] } {
  const rules: Json[] = [];
  const kept: Route[] = [];
  const ext = routeFilters?.of(ingress.namespace, ingress.name);
  for (const r of routes) {
    const reasons: string[] = [];
    const rule = convertRule(r, model, ingress.namespace, reasons, ext);
    for (const message of reasons) {
      const k = `${ingress.namespace}/${ingress.name}\n${message}`;
      const e = lost.get(k) ?? { ingress, message, paths: new Set<string>() };
      e.paths.add(`${vh.hostname} ${r.match.path.value}`);
      lost.set(k, e);
    }
    if (rule === undefined) continue;
    rules.push(rule);
    kept.push(r);
  }
  return { rules, kept };
}

/** The guards of a route (policies.ts writes them), so hosts whose guards differ get different HTTPRoutes. */
function guardSignature(r: Route): string {
  return JSON.stringify([r.auth, r.ipAccess, r.rateLimit, r.waf, r.clientCertificate]);
}

/** Groups as HTTPRoutes, split at the limits, named in a stable order per Ingress. */
function namedRoutes(
  groups: readonly Group[],
  plan: GatewayPlan,
  ingressNames: readonly string[],
): ConvertedRoute[] {
  const parts: { ingress: SourceRef; hosts: HostEntry[]; rules: Json[]; routes: Route[]; order: string }[] =
    [];
  for (const g of groups) {
    const hosts = [...g.hosts].sort((a, b) => compareStrings(a.hostname, b.hostname));
    for (let h = 0; h < hosts.length; h += limits.hostnames) {
      for (let r = 0; r < Math.max(1, g.rules.length); r += limits.rules) {
        const slice = hosts.slice(h, h + limits.hostnames);
        parts.push({
          ingress: g.ingress,
          hosts: slice,
          rules: g.rules.slice(r, r + limits.rules),
          routes: g.routes.slice(r, r + limits.rules),
          order: `${slice[0]?.hostname ?? ""}\n${[...(slice[0]?.sections ?? [])].sort().join(",")}\n${String(r).padStart(6, "0")}`,
        });
      }
    }
  }
  parts.sort(
    (a, b) =>
      compareStrings(a.ingress.namespace, b.ingress.namespace) ||
      compareStrings(a.ingress.name, b.ingress.name) ||
      compareStrings(a.order, b.order),
  );
  const names = new NamePicker(ingressNames);
  const firsts = new Set<string>();
  return parts.map((p) => {
    const key = `${p.ingress.namespace}/${p.ingress.name}`;
    const name = names.pick(p.ingress.namespace, p.ingress.name, !firsts.has(key));
    firsts.add(key);
    const sections = [...new Set(p.hosts.flatMap((h) => [...h.sections]))].sort(compareStrings);
    const hostnames = p.hosts.filter((h) => h.match !== "Any").map((h) => h.hostname);
    const object = {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: {
        name,
        namespace: p.ingress.namespace,
        annotations: { [SOURCE_ANNOTATION]: p.ingress.name },
      },
      spec: {
        parentRefs: sections.map((sectionName) => ({
          name: plan.ref.name,
          ...(plan.ref.namespace !== p.ingress.namespace ? { namespace: plan.ref.namespace } : {}),
          sectionName,
        })),
        // A host-less Ingress rule serves every host: an HTTPRoute without hostnames does too.
        ...(hostnames.length > 0 ? { hostnames } : {}),
        rules: p.rules,
      },
    };
    return { ingress: p.ingress, name, object, routes: p.routes };
  });
}
