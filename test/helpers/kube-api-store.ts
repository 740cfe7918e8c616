/**
 * The storage half of the test API server: objects by resource, one global resourceVersion counter, a
 * bounded event history per resource (older resourceVersions are "compacted" and answer 410 Gone), and
 * the write semantics of the real API server: optimistic concurrency on `metadata.resourceVersion`,
 * `generation` bumped only by spec changes, the status subresource changing only `.status`.
 */

/** One resource the server serves (group "" = core). */
export interface ResourceDef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** Has a `/status` subresource: the main resource then ignores `.status` and vice versa. */
  readonly status: boolean;
  /** Has a `/scale` subresource (apps Deployments and StatefulSets; kube-api-scale.ts serves it). */
  readonly scale?: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: objects are arbitrary JSON, as on the wire
export type Obj = Record<string, any>;

export type EventType = "ADDED" | "MODIFIED" | "DELETED";

export interface StoredEvent {
  readonly type: EventType;
  readonly rv: number;
  readonly object: Obj;
  /** The object before a MODIFIED (for label-selector watches that stop or start matching). */
  readonly old?: Obj;
}

/** A Kubernetes `Status` failure, thrown by store operations and sent as the HTTP answer. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
  toStatus(): Obj {
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
  }
}

/** The kinds Gatehouse reads and writes, with the subresources the real API has. */
export const defaultResources: readonly ResourceDef[] = [
  def("", "v1", "services", "Service", true, true),
  def("", "v1", "secrets", "Secret", true, false),
  def("", "v1", "configmaps", "ConfigMap", true, false),
  def("", "v1", "namespaces", "Namespace", false, true),
  def("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true, false),
  def("networking.k8s.io", "v1", "ingresses", "Ingress", true, true),
  def("networking.k8s.io", "v1", "ingressclasses", "IngressClass", false, false),
  def("gateway.networking.k8s.io", "v1", "gatewayclasses", "GatewayClass", false, true),
  def("gateway.networking.k8s.io", "v1", "gateways", "Gateway", true, true),
  def("gateway.networking.k8s.io", "v1", "httproutes", "HTTPRoute", true, true),
  def("gateway.networking.k8s.io", "v1", "grpcroutes", "GRPCRoute", true, true),
  def("gateway.networking.k8s.io", "v1", "tlsroutes", "TLSRoute", true, true),
  def("gateway.networking.k8s.io", "v1", "tcproutes", "TCPRoute", true, true),
  def("gateway.networking.k8s.io", "v1", "listenersets", "ListenerSet", true, true),
  def("gateway.networking.k8s.io", "v1", "udproutes", "UDPRoute", true, true),
  def("gateway.networking.k8s.io", "v1beta1", "referencegrants", "ReferenceGrant", true, false),
  def("gateway.networking.k8s.io", "v1", "backendtlspolicies", "BackendTLSPolicy", true, true),
  def("coordination.k8s.io", "v1", "leases", "Lease", true, false),
  def("gatehouse.dev", "v1alpha1", "authpolicies", "AuthPolicy", true, true),
  def("gatehouse.dev", "v1alpha1", "ratelimitpolicies", "RateLimitPolicy", true, true),
  def("gatehouse.dev", "v1alpha1", "backendtrafficpolicies", "BackendTrafficPolicy", true, true),
  def("gatehouse.dev", "v1alpha1", "scaletozeropolicies", "ScaleToZeroPolicy", true, true),
  def("gatehouse.dev", "v1alpha1", "wafpolicies", "WAFPolicy", true, true),
  def("apps", "v1", "deployments", "Deployment", true, true, true),
  def("apps", "v1", "statefulsets", "StatefulSet", true, true, true),
  def("gatehouse.dev", "v1alpha1", "httproutefilters", "HTTPRouteFilter", true, false),
];

function def(
  g: string,
  v: string,
  plural: string,
  kind: string,
  ns: boolean,
  status: boolean,
  scale = false,
): ResourceDef {
  return { group: g, version: v, plural, kind, namespaced: ns, status, ...(scale ? { scale } : {}) };
}

export const apiVersionOf = (r: ResourceDef) => (r.group ? `${r.group}/${r.version}` : r.version);
const clone = (o: Obj): Obj => structuredClone(o);
const keyOf = (ns: string, name: string) => `${ns}/${name}`;

/** Everything outside `metadata` and `status`: what bumps `generation` when it changes. */
function specPart(o: Obj): string {
  const { metadata: _m, status: _s, resourceVersion: _r, ...rest } = o;
  return JSON.stringify(rest);
}

/** All objects of all resources, with their history. */
export class Store {
  rv = 1;
  readonly #objects = new Map<ResourceDef, Map<string, Obj>>();
  readonly #history = new Map<ResourceDef, StoredEvent[]>();
  /** Events at or below this resourceVersion are gone: a watch from an older one gets 410. */
  readonly #compacted = new Map<ResourceDef, number>();
  readonly #listeners = new Set<(r: ResourceDef, e: StoredEvent) => void>();
  #uid = 0;

  constructor(
    readonly resources: readonly ResourceDef[],
    readonly historyLimit: number,
  ) {
    for (const r of resources) {
      this.#objects.set(r, new Map());
      this.#history.set(r, []);
      this.#compacted.set(r, 0);
    }
  }

  onEvent(fn: (r: ResourceDef, e: StoredEvent) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  list(r: ResourceDef, namespace?: string): Obj[] {
    const all = [...(this.#objects.get(r)?.values() ?? [])];
    const out = namespace ? all.filter((o) => o.metadata.namespace === namespace) : all;
    return out
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))
      .map(clone);
  }

  get(r: ResourceDef, namespace: string, name: string): Obj {
    const o = this.#objects.get(r)?.get(keyOf(r.namespaced ? namespace : "", name));
    if (!o) throw notFound(r, name);
    return clone(o);
  }

  /** Events after `rv` for a watch; throws 410 Expired when some of them are no longer kept. */
  since(r: ResourceDef, rv: number): StoredEvent[] {
    const compacted = this.#compacted.get(r) ?? 0;
    if (rv < compacted) {
      throw new ApiError(410, "Expired", `too old resource version: ${rv} (${compacted})`);
    }
    return (this.#history.get(r) ?? []).filter((e) => e.rv > rv);
  }

  /** Forget every event so far: watches from any older resourceVersion get 410 Gone. */
  compact(): void {
    for (const r of this.resources) {
      this.#history.set(r, []);
      this.#compacted.set(r, this.rv);
    }
  }

  create(r: ResourceDef, namespace: string, body: Obj): Obj {
    const meta = { ...(body.metadata ?? {}) };
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${(++this.#uid).toString(36)}x`;
    if (!meta.name) throw new ApiError(422, "Invalid", "metadata.name: Required value");
    const ns = r.namespaced ? namespace || meta.namespace || "default" : "";
    if (r.namespaced && meta.namespace && namespace && meta.namespace !== namespace) {
      throw new ApiError(
        400,
        "BadRequest",
        "the namespace of the object does not match the namespace of the request",
      );
    }
    const objects = this.#objects.get(r) as Map<string, Obj>;
    if (objects.has(keyOf(ns, meta.name))) {
      throw new ApiError(409, "AlreadyExists", `${r.plural} "${meta.name}" already exists`);
    }
    const rv = ++this.rv;
    const obj: Obj = {
      ...clone(body),
      apiVersion: apiVersionOf(r),
      kind: r.kind,
      metadata: {
        ...meta,
        ...(r.namespaced ? { namespace: ns } : {}),
        uid: `uid-${++this.#uid}`,
        resourceVersion: String(rv),
        generation: 1,
        creationTimestamp: meta.creationTimestamp ?? new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      },
    };
    if (r.namespaced === false) delete obj.metadata.namespace;
    if (r.status) delete obj.status;
    objects.set(keyOf(ns, meta.name), obj);
    this.#record(r, { type: "ADDED", rv, object: clone(obj) });
    return clone(obj);
  }

  /**
   * Replace an object (PUT) or its status (`sub` = "status"). A `metadata.resourceVersion` in the body
   * must match the stored one (409 Conflict otherwise); without one the write is unconditional.
   */
  update(r: ResourceDef, namespace: string, name: string, body: Obj, sub?: "status"): Obj {
    const ns = r.namespaced ? namespace : "";
    const objects = this.#objects.get(r) as Map<string, Obj>;
    const old = objects.get(keyOf(ns, name));
    if (!old) throw notFound(r, name);
    const wanted = body.metadata?.resourceVersion;
    if (wanted !== undefined && wanted !== "" && wanted !== old.metadata.resourceVersion) {
      throw new ApiError(
        409,
        "Conflict",
        `Operation cannot be fulfilled on ${r.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    if (body.metadata?.name !== undefined && body.metadata.name !== name) {
      throw new ApiError(400, "BadRequest", "the name of the object does not match the name on the URL");
    }
    let next: Obj;
    if (sub === "status") {
      next = { ...clone(old), status: clone(body.status ?? {}) };
    } else {
      next = {
        ...clone(body),
        apiVersion: old.apiVersion,
        kind: old.kind,
        metadata: {
          ...clone(body.metadata ?? {}),
          name,
          ...(r.namespaced ? { namespace: ns } : {}),
          uid: old.metadata.uid,
          creationTimestamp: old.metadata.creationTimestamp,
          generation: old.metadata.generation,
        },
      };
      if (r.status) next.status = clone(old.status ?? undefined);
      if (next.status === undefined) delete next.status;
      if (specPart(next) !== specPart(old)) next.metadata.generation = (old.metadata.generation ?? 1) + 1;
    }
    if (JSON.stringify(next) === JSON.stringify(old)) return clone(old); // a no-op write keeps its version
    const rv = ++this.rv;
    next.metadata.resourceVersion = String(rv);
    objects.set(keyOf(ns, name), next);
    this.#record(r, { type: "MODIFIED", rv, object: clone(next), old: clone(old) });
    return clone(next);
  }

  delete(r: ResourceDef, namespace: string, name: string): Obj {
    const ns = r.namespaced ? namespace : "";
    const objects = this.#objects.get(r) as Map<string, Obj>;
    const old = objects.get(keyOf(ns, name));
    if (!old) throw notFound(r, name);
    objects.delete(keyOf(ns, name));
    const rv = ++this.rv;
    const gone = { ...clone(old), metadata: { ...old.metadata, resourceVersion: String(rv) } };
    this.#record(r, { type: "DELETED", rv, object: gone });
    return clone(gone);
  }

  /** Hand an event to the open watches without storing it (tests of malformed streams). */
  emit(r: ResourceDef, e: StoredEvent): void {
    for (const fn of this.#listeners) fn(r, e);
  }

  #record(r: ResourceDef, e: StoredEvent): void {
    const history = this.#history.get(r) as StoredEvent[];
    history.push(e);
    while (history.length > this.historyLimit) {
      const dropped = history.shift() as StoredEvent;
      this.#compacted.set(r, dropped.rv);
    }
    for (const fn of this.#listeners) fn(r, e);
  }
}

function notFound(r: ResourceDef, name: string): ApiError {
  const what = r.group ? `${r.plural}.${r.group}` : r.plural;
  return new ApiError(404, "NotFound", `${what} "${name}" not found`);
}
