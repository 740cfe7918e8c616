/**
 * Gateways in a cluster (docs/kubernetes.md, "Gateways in a cluster"): one fleet serves every Gateway of
 * our classes; listener port P is served on the internal port P + `--gateway-port-offset`, and the
 * leader keeps one Service per Gateway, beside the fleet's own Service (`--publish-service`, whose
 * selector picks the gateway pods), mapping each listener port to its internal port. That Service's
 * address is the Gateway's `status.addresses`.
 */
import type { GatewayModel } from "../../model/index.ts";
import { logger } from "../../observability/logger.ts";
import { OnePassAtATime } from "../../status/one-pass.ts";
import {
  infrastructureOf,
  managedAnnotationsKey,
  managedByLabel,
} from "../../translate/gateway/infrastructure.ts";
import type { Gateway } from "../schema/gateway.ts";
import { describeFailure, type KubeClient } from "./client.ts";
import type { RawObject } from "./informer.ts";
import { resourcePath, watchedResources } from "./resources.ts";

const log = logger.child({ component: "gateway-services" });

/** The string entries of a Service's labels or annotations. */
function stringMap(v: unknown): Record<string, string> {
  if (!v || typeof v !== "object" || Array.isArray(v)) return {};
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === "string",
    ),
  );
}

/** Gateway listeners bind `port + offset`; passthrough listeners (no redirects, no Host) just move. */
export function withInternalPorts(model: GatewayModel, offset: number): GatewayModel {
  if (offset === 0) return model;
  return {
    ...model,
    listeners: model.listeners.map((l) =>
      l.source.kind === "Gateway" ? { ...l, bindPort: l.port + offset } : l,
    ),
    ...(model.passthroughListeners
      ? { passthroughListeners: model.passthroughListeners.map((p) => ({ ...p, port: p.port + offset })) }
      : {}),
  };
}

/** `gatehouse-gw-<ns>-<name>`, cut to a DNS label (63) with a hash suffix when too long. */
export function gatewayServiceName(namespace: string, name: string): string {
  const full = `gatehouse-gw-${namespace}-${name}`;
  if (full.length <= 63) return full;
  const hash = Bun.hash(full).toString(36).slice(0, 8);
  return `${full.slice(0, 54).replace(/-+$/, "")}-${hash}`;
}

export interface FleetService {
  readonly namespace: string;
  readonly selector: Readonly<Record<string, string>>;
}

/**
 * The Service each of our Gateways should have (`gateways`: ours, as translation accepted them). Its
 * labels and annotations are the Gateway's infrastructure metadata (translate/gateway/infrastructure.ts:
 * ours, plus the `spec.infrastructure` entries accepted), the record /debug/status shows.
 */
export function desiredServices(
  gateways: readonly Gateway[],
  fleet: FleetService,
  type: string,
  offset: number,
  uidOf: (g: Gateway) => string | undefined,
): RawObject[] {
  return gateways.map((g) => {
    const ns = g.metadata.namespace ?? "default";
    const ports = servicePorts(g);
    const uid = uidOf(g);
    // Owner references cannot cross namespaces: only a Gateway in the fleet's namespace owns its Service;
    // the others' Services are deleted by the leader (by label) when their Gateway goes.
    const owner =
      ns === fleet.namespace && uid
        ? [
            {
              apiVersion: "gateway.networking.k8s.io/v1",
              kind: "Gateway",
              name: g.metadata.name,
              uid,
              controller: true,
            },
          ]
        : undefined;
    const { labels, annotations } = infrastructureOf(g).metadata;
    return {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: gatewayServiceName(ns, g.metadata.name),
        namespace: fleet.namespace,
        labels: { ...labels },
        ...annotationsOf(annotations),
        ...(owner ? { ownerReferences: owner } : {}),
      },
      spec: {
        type,
        selector: { ...fleet.selector },
        ports: ports.map(({ port, protocol }) => ({
          name: `${protocol === "UDP" ? "u" : "p"}${port}`,
          protocol,
          port,
          targetPort: port + offset,
        })),
      },
    };
  });
}

/**
 * One Service port per listener port and transport: a UDP listener's port is a UDP Service port (named
 * `u<port>`), every other listener's a TCP one (`p<port>`); a port with both kinds of listener has both.
 */
function servicePorts(g: Gateway): { port: number; protocol: "TCP" | "UDP" }[] {
  const seen = new Map<string, { port: number; protocol: "TCP" | "UDP" }>();
  for (const l of g.spec?.listeners ?? []) {
    const protocol = l.protocol === "UDP" ? "UDP" : "TCP";
    seen.set(`${l.port}/${protocol}`, { port: l.port, protocol });
  }
  return [...seen.values()].sort((a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol));
}

/** The infrastructure annotations, plus the list of their keys (none: no annotations at all). */
function annotationsOf(infra: Readonly<Record<string, string>>): { annotations?: Record<string, string> } {
  const keys = Object.keys(infra).sort();
  return keys.length ? { annotations: { ...infra, [managedAnnotationsKey]: keys.join(",") } } : {};
}

/** The annotations we manage on a Service: those listed under `managedAnnotationsKey`, and the list. */
function ownAnnotations(s: RawObject): Record<string, string> {
  const all = stringMap(s.metadata?.annotations);
  const keys = (all[managedAnnotationsKey] ?? "").split(",").filter(Boolean);
  const out: Record<string, string> = {};
  for (const k of [...keys, managedAnnotationsKey].sort()) if (all[k] !== undefined) out[k] = all[k];
  return out;
}

/**
 * The fields we own in a managed Service, to tell whether an update is due. Labels in key order: the API
 * server returns maps sorted, whatever order they were written in.
 */
function owned(s: RawObject): string {
  const spec = (s.spec ?? {}) as Record<string, unknown>;
  const meta = s.metadata ?? {};
  return JSON.stringify([
    spec.type,
    spec.selector,
    ownPorts(spec.ports),
    Object.entries(stringMap(meta.labels)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    ownAnnotations(s),
    meta.ownerReferences ?? null,
  ]);
}

interface ServicePort {
  readonly name?: string;
  readonly protocol?: string;
  readonly port?: number;
  readonly targetPort?: number | string;
  readonly nodePort?: number;
}

/**
 * The port fields we set. The API server adds others (a LoadBalancer's or NodePort's `nodePort`, and the
 * protocol's default): compared whole, every apply would rewrite every such Service.
 */
function ownPorts(ports: unknown): unknown[] {
  if (!Array.isArray(ports)) return [];
  return (ports as ServicePort[]).map((p) => [p.name, p.protocol ?? "TCP", p.port, p.targetPort]);
}

/** The desired ports, each keeping the node port the API server gave the existing port of its name. */
function keepNodePorts(want: unknown, have: unknown): unknown {
  if (!Array.isArray(want) || !Array.isArray(have)) return want;
  const nodePorts = new Map((have as ServicePort[]).map((p) => [p.name, p.nodePort]));
  return (want as ServicePort[]).map((p) => {
    const nodePort = nodePorts.get(p.name);
    return nodePort === undefined ? p : { ...p, nodePort };
  });
}

/**
 * Creates, updates and deletes the managed Services so they match the desired ones. Passes are
 * serialised and coalesced (the latest desired state wins); failures are retried by a later pass.
 */
export class GatewayServices {
  readonly #client: KubeClient;
  readonly #existing: () => readonly RawObject[];
  readonly #isLeader: () => boolean;
  #desired: readonly RawObject[] | undefined;
  readonly #passes = new OnePassAtATime(
    () => this.#pass(),
    () => this.kick(),
  );
  #retry: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  constructor(client: KubeClient, existing: () => readonly RawObject[], isLeader: () => boolean) {
    this.#client = client;
    this.#existing = existing;
    this.#isLeader = isLeader;
  }

  update(desired: readonly RawObject[]): void {
    this.#desired = desired;
    this.kick();
  }

  kick(): void {
    if (this.#stopped || !this.#isLeader() || this.#desired === undefined) return;
    this.#passes.run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    await this.#passes.idle();
  }

  async #pass(): Promise<void> {
    const desired = this.#desired ?? [];
    const managed = this.#existing().filter((s) => s.metadata?.labels?.[managedByLabel] === "gatehouse");
    const byKey = new Map(managed.map((s) => [`${s.metadata?.namespace}/${s.metadata?.name}`, s]));
    const calls: [string, string, unknown][] = [];
    for (const want of desired) {
      const { namespace = "", name = "" } = want.metadata ?? {};
      const have = byKey.get(`${namespace}/${name}`);
      byKey.delete(`${namespace}/${name}`);
      if (!have) calls.push(["POST", resourcePath(watchedResources.Service, namespace), want]);
      else if (owned(have) !== owned(want)) {
        const haveSpec = (have.spec ?? {}) as Record<string, unknown>;
        const wantSpec = (want.spec ?? {}) as Record<string, unknown>;
        // A changed port list must not move the node ports a load balancer already sends to.
        const spec = { ...haveSpec, ...wantSpec, ports: keepNodePorts(wantSpec.ports, haveSpec.ports) };
        // Others' annotations stay; the ones we set before and no longer want go.
        const kept = { ...stringMap(have.metadata?.annotations) };
        for (const k of Object.keys(ownAnnotations(have))) delete kept[k];
        const annotations = { ...kept, ...stringMap(want.metadata?.annotations) };
        const metadata = {
          ...have.metadata,
          labels: want.metadata?.labels,
          annotations,
          ownerReferences: want.metadata?.ownerReferences,
        };
        calls.push([
          "PUT",
          resourcePath(watchedResources.Service, namespace, name),
          { ...have, metadata, spec },
        ]);
      }
    }
    for (const stale of byKey.values()) {
      const { namespace = "", name = "" } = stale.metadata ?? {};
      calls.push(["DELETE", resourcePath(watchedResources.Service, namespace, name), undefined]);
    }
    let failed = false;
    for (const [method, path, body] of calls) {
      if (this.#stopped || !this.#isLeader()) return;
      try {
        const res = await this.#client.request(method as "POST", path, body === undefined ? {} : { body });
        // A create our cache had not seen yet (409 AlreadyExists) or a delete already done (404) is fine.
        const done = res.status < 300 || res.status === 404 || (method === "POST" && res.status === 409);
        if (!done) {
          failed = true;
          log.warn("managed Service not written; retrying", { method, path, status: describeFailure(res) });
        }
      } catch (err) {
        failed = true;
        log.warn("managed Service not written; retrying", { method, path, error: (err as Error).message });
      }
    }
    if (failed && !this.#stopped) {
      clearTimeout(this.#retry);
      this.#retry = setTimeout(() => this.kick(), 2000);
    }
  }
}
