/**
 * The HTTPRouteFilters `gatehouse convert` writes (gateway-crds/httproutefilter.yaml) for what an Ingress
 * did that Gateway API has no field for: a capture-group rewrite or an upstream Host with a port, a
 * redirect that drops a trailing slash, names the default port or builds its Location from variables,
 * ingress-nginx's CORS, the rewrite of the backend's redirects and cookies. One object per
 * Ingress and distinct spec, named after the Ingress and what it does (`shop-rewrite`, `shop-rewrite-2`),
 * in the Ingress's namespace (an ExtensionRef names a filter of the route's own namespace). With
 * `--portable` none is written and what needs one is a finding.
 */
import { policyGroup } from "../sources/schema/groups.ts";
import { ROUTE_FILTER_KIND } from "../translate/gateway/httproute/extension-filter.ts";
import { SOURCE_ANNOTATION } from "./names.ts";

type Json = Record<string, unknown>;

/** What a filter does: the last part of its name. */
export type RouteFilterPurpose = "rewrite" | "redirect" | "cors" | "response-rewrite";

/** The filters of one Ingress: `ref` gives the ExtensionRef filter naming an HTTPRouteFilter with `spec`. */
export interface IngressRouteFilters {
  ref(purpose: RouteFilterPurpose, spec: Json): Json;
}

export class RouteFilters {
  readonly #names = new Map<string, string>();
  readonly #taken = new Set<string>();
  readonly #objects: Json[] = [];

  /** The filters of Ingress `namespace/name`. */
  of(namespace: string, ingress: string): IngressRouteFilters {
    return { ref: (purpose, spec) => this.#ref(namespace, ingress, purpose, spec) };
  }

  /** The objects written, in the order first named. */
  get objects(): readonly Json[] {
    return this.#objects;
  }

  #ref(namespace: string, ingress: string, purpose: RouteFilterPurpose, spec: Json): Json {
    const key = `${namespace}\n${ingress}\n${purpose}\n${JSON.stringify(spec)}`;
    let name = this.#names.get(key);
    if (name === undefined) {
      const base = `${ingress}-${purpose}`.slice(0, 240);
      name = base;
      for (let n = 2; this.#taken.has(`${namespace}/${name}`); n++) name = `${base}-${n}`;
      this.#taken.add(`${namespace}/${name}`);
      this.#names.set(key, name);
      this.#objects.push({
        apiVersion: `${policyGroup}/v1alpha1`,
        kind: ROUTE_FILTER_KIND,
        metadata: { name, namespace, annotations: { [SOURCE_ANNOTATION]: ingress } },
        spec,
      });
    }
    return { type: "ExtensionRef", extensionRef: { group: policyGroup, kind: ROUTE_FILTER_KIND, name } };
  }
}
