import { logger } from "../../observability/logger.ts";
import { CappedDebounce } from "../debounce.ts";
import type { KnownKind } from "../schema/index.ts";
import { FirstSeen, type SkippedObjectRef, skippedKey, skippedMessage } from "../skipped.ts";
import type { ResourceSnapshot, UnreadableObject } from "../snapshot.ts";
import {
  assembleSnapshot,
  type InvalidObject,
  type ParseCache,
  referencedConfigMaps,
  referencedSecrets,
} from "./assemble.ts";
import type { KubeClient } from "./client.ts";
import { KindInformer, type KindInformerOptions, type RawObject } from "./informer.ts";
import { ReferencedData } from "./referenced-data.ts";
import { apiVersionOf, mayBeForbidden, skippedResources, watchedResources } from "./resources.ts";
import { attachesToOurs, ourGateways, servicesOfOurRoutes, targetsOurServices } from "./skipped-relevance.ts";

const log = logger.child({ component: "kube-source" });

export interface KubernetesSourceOptions {
  /** Quiet time after the last change before a snapshot is built (latest wins). Default 100 ms. */
  readonly debounceMs?: number;
  /** Passed to each watch; see KindInformerOptions. */
  readonly watchIdleMs?: number;
  /** Secrets kept with their data although nothing references them (`--default-certificate`). */
  readonly alwaysSecrets?: readonly string[];
  /** ConfigMaps kept with their data although nothing references them (`--error-pages-configmap`). */
  readonly alwaysConfigMaps?: readonly string[];
  /** How long a snapshot waits for referenced Secrets and ConfigMaps still being read (default 5 s); see
   * ReferencedData. */
  readonly secretWaitMs?: number;
  /** Our GatewayClasses' `spec.controllerName`: skipped objects are reported only when they ask
   * something of a Gateway of ours (skipped-relevance.ts). Absent: none is reported. */
  readonly gatewayController?: string;
  /**
   * Each EndpointSlice added or changed, the moment its event arrives: activation releases requests held
   * for a waking backend at once (proxy/activation/endpoint-wake.ts) instead of after the debounce and a
   * full translate (which still follow).
   */
  readonly onEndpointSlice?: (slice: RawObject) => void;
}

/** How often, at most, a change of a skipped kind is compared with what was reported. */
const SKIPPED_CHECK_MS = 50;

/**
 * The cluster as `ResourceSnapshot`s: one informer per kind (cluster-wide list+watch), every change
 * debounced into one rebuild, delivered to `onSnapshot` — the same contract as `FolderSource`. The first
 * snapshot is delivered only when every kind has been listed once and the Secrets it references have
 * been read (or `secretWaitMs` ran out), so a half-synced cluster never serves and readiness never goes
 * true with listeners on the default certificate. While the API server is unreachable nothing is
 * delivered and the last table keeps serving; the informers retry with backoff. Secrets and ConfigMaps:
 * see ReferencedData.
 */
export class KubernetesSource {
  readonly #onSnapshot: (snapshot: ResourceSnapshot) => void;
  readonly #informers: Map<KnownKind, KindInformer>;
  /** Gateway API kinds we do not serve, watched to report their objects; never awaited for a snapshot. */
  readonly #skippedInformers: KindInformer[];
  readonly #skippedSeen = new FirstSeen();
  #skipped: readonly SkippedObjectRef[] = [];
  #skippedCheck: ReturnType<typeof setTimeout> | undefined;
  readonly #gatewayController: string | undefined;
  readonly #cache: ParseCache = new Map();
  readonly #secrets: ReferencedData;
  readonly #configMaps: ReferencedData;
  readonly #reported = new Set<string>();
  readonly #debounce: CappedDebounce;
  #invalid: readonly InvalidObject[] = [];
  #secretWait: ReturnType<typeof setTimeout> | undefined;
  #firstSync: (() => void) | undefined;
  #delivered = false;
  #stopped = false;

  constructor(
    client: KubeClient,
    onSnapshot: (snapshot: ResourceSnapshot) => void,
    opts: KubernetesSourceOptions = {},
  ) {
    this.#onSnapshot = onSnapshot;
    this.#gatewayController = opts.gatewayController;
    this.#debounce = new CappedDebounce(opts.debounceMs ?? 100, () => this.#build());
    const always = opts.alwaysSecrets ?? [];
    this.#secrets = new ReferencedData(client, () => this.#changed(), {
      kind: "Secret",
      dataFields: ["data", "stringData"],
      referencedBy: (o) =>
        referencedSecrets(
          { gateways: o.Gateway as never, ingresses: o.Ingress as never, authPolicies: o.AuthPolicy },
          always,
        ),
      waitMs: opts.secretWaitMs,
    });
    this.#configMaps = new ReferencedData(client, () => this.#changed(), {
      kind: "ConfigMap",
      dataFields: ["data"],
      unread: ["binaryData"],
      referencedBy: (o) =>
        referencedConfigMaps(o.Ingress, o.Gateway, o.BackendTLSPolicy, opts.alwaysConfigMaps ?? []),
      waitMs: opts.secretWaitMs,
    });
    this.#informers = new Map(
      (Object.keys(watchedResources) as KnownKind[]).map((kind) => [
        kind,
        new KindInformer(client, watchedResources[kind], {
          onChange: () => this.#changed(),
          ...(kind === "EndpointSlice" && opts.onEndpointSlice
            ? endpointSliceEvents(opts.onEndpointSlice)
            : {}),
          transform: this.#transform(kind),
          watchIdleMs: opts.watchIdleMs,
          forbiddenIsEmpty: mayBeForbidden.has(kind),
        }),
      ]),
    );
    this.#skippedInformers = skippedResources.map(
      (r) =>
        new KindInformer(client, r, {
          onChange: () => this.#skippedChanged(),
          watchIdleMs: opts.watchIdleMs,
          optional: true,
        }),
    );
  }

  /** Start every informer; resolves once the first full snapshot has been delivered. */
  start(): Promise<void> {
    const synced = new Promise<void>((resolve) => {
      this.#firstSync = resolve;
    });
    for (const informer of this.#informers.values()) informer.start();
    for (const informer of this.#skippedInformers) informer.start();
    return synced;
  }

  stop(): void {
    this.#stopped = true;
    this.#debounce.cancel();
    clearTimeout(this.#secretWait);
    clearTimeout(this.#skippedCheck);
    this.#secrets.stop();
    this.#configMaps.stop();
    for (const informer of this.#informers.values()) informer.stop();
    for (const informer of this.#skippedInformers) informer.stop();
    this.#firstSync?.();
  }

  /** True once every kind has been listed (and the first snapshot delivered). */
  get synced(): boolean {
    return this.#delivered;
  }

  /** The objects the API returned that failed validation, as of the last delivered snapshot. */
  get invalid(): readonly InvalidObject[] {
    return this.#invalid;
  }

  /** Objects of Gateway API kinds Gatehouse does not serve, as of the last delivered snapshot. */
  get skipped(): readonly SkippedObjectRef[] {
    return this.#skipped;
  }

  /** Every cached object of a kind. */
  objects(kind: KnownKind): RawObject[] {
    return this.#informers.get(kind)?.list() ?? [];
  }

  /** The cached raw object (with its current `.status`), for the status writer. */
  lookup(kind: KnownKind, namespace: string, name: string): RawObject | undefined {
    return this.#informers.get(kind)?.get(namespace, name);
  }

  /** Secrets and ConfigMaps are cached without the data of those nothing references. */
  #transform(kind: KnownKind): ((obj: RawObject) => RawObject) | undefined {
    if (kind === "Secret") return (obj) => this.#secrets.strip(obj);
    if (kind === "ConfigMap") return (obj) => this.#configMaps.strip(obj);
    return undefined;
  }

  #changed(): void {
    if (!this.#stopped) this.#debounce.trigger();
  }

  #build(): void {
    if (this.#stopped) return;
    const informers = [...this.#informers.values()];
    if (!informers.every((i) => i.synced)) return; // the last informer's sync triggers the first build
    const objects = Object.fromEntries(
      [...this.#informers].map(([kind, informer]) => [kind, informer.list()]),
    ) as Record<KnownKind, RawObject[]>;
    const secrets = this.#secrets.resolve(objects);
    const configMaps = this.#configMaps.resolve(objects);
    clearTimeout(this.#secretWait);
    const waiting = [...secrets.waiting, ...configMaps.waiting];
    if (waiting.length) {
      // Their reads rebuild when they answer; this timer bounds the wait for one that never does.
      this.#secretWait = setTimeout(() => this.#changed(), Math.min(secrets.waitMs, configMaps.waitMs));
      log.debug("holding the snapshot for referenced Secrets or ConfigMaps being read", { objects: waiting });
      return;
    }
    const { snapshot, invalid } = assembleSnapshot(objects, () => true, this.#cache);
    const keyOf = (o: { metadata: { namespace?: string; name: string } }) =>
      `${o.metadata.namespace ?? ""}/${o.metadata.name}`;
    this.#report(invalid);
    this.#invalid = invalid;
    this.#reportSkipped();
    this.#delivered = true;
    const unreadable = [
      ...unreadableOf("Secret", secrets.unreadable),
      ...unreadableOf("ConfigMap", this.#configMapsForbidden(configMaps.referenced) ?? configMaps.unreadable),
    ];
    this.#onSnapshot({
      ...snapshot,
      secrets: snapshot.secrets.filter((s) => secrets.referenced.has(keyOf(s))),
      configMaps: snapshot.configMaps.filter((c) => configMaps.referenced.has(keyOf(c))),
      ...(unreadable.length > 0 ? { unreadable } : {}),
    });
    this.#firstSync?.();
    this.#firstSync = undefined;
  }

  /** Every referenced ConfigMap, when RBAC does not let us list ConfigMaps (their informer counts them as none). */
  #configMapsForbidden(referenced: ReadonlySet<string>): Map<string, string> | undefined {
    if (!this.#informers.get("ConfigMap")?.forbidden) return undefined;
    const why =
      "the gateway is not allowed to list ConfigMaps (its ClusterRole lacks configmaps list and watch)";
    return new Map([...referenced].map((key) => [key, why]));
  }

  /** The skipped kinds' objects that ask something of our Gateways, as the informers hold them now. */
  #listSkipped(): SkippedObjectRef[] {
    const controller = this.#gatewayController;
    if (controller === undefined) return [];
    const gateways = ourGateways(this.objects("GatewayClass"), this.objects("Gateway"), controller);
    if (gateways.size === 0) return [];
    let services: Set<string> | undefined;
    const relevant = (kind: string, o: RawObject): boolean => {
      if (kind !== "XBackendTrafficPolicy") return attachesToOurs(o, gateways);
      services ??= servicesOfOurRoutes(
        [...this.objects("HTTPRoute"), ...this.objects("GRPCRoute"), ...this.objects("TLSRoute")],
        gateways,
      );
      return targetsOurServices(o, services);
    };
    return this.#skippedInformers.flatMap((i) =>
      i
        .list()
        .filter((o) => relevant(i.resource.kind, o))
        .map((o) => ({
          kind: i.resource.kind,
          apiVersion: apiVersionOf(i.resource),
          namespace: o.metadata?.namespace ?? "",
          name: o.metadata?.name ?? "",
        })),
    );
  }

  /**
   * A skipped kind changed: rebuild only when the set of reported objects did. Compared at most once per
   * SKIPPED_CHECK_MS, not per event: a burst of n events (another controller rewriting n statuses) would
   * otherwise cost n comparisons of n objects on the thread that serves traffic.
   */
  #skippedChanged(): void {
    if (this.#skippedCheck !== undefined || this.#stopped) return;
    this.#skippedCheck = setTimeout(() => {
      this.#skippedCheck = undefined;
      const now = this.#listSkipped().map(skippedKey).sort().join("\n");
      if (now !== this.#skipped.map(skippedKey).sort().join("\n")) this.#changed();
    }, SKIPPED_CHECK_MS);
  }

  /** Read the skipped kinds' objects; log each the first time it is seen (FirstSeen). */
  #reportSkipped(): void {
    this.#skipped = this.#listSkipped();
    const fresh = new Set(this.#skippedSeen.fresh(this.#skipped.map(skippedKey)));
    for (const o of this.#skipped) {
      if (fresh.has(skippedKey(o)))
        log.warn(skippedMessage(o), { kind: o.kind, name: `${o.namespace}/${o.name}` });
    }
  }

  /** Log each invalid object once per version; it stays left out until fixed. */
  #report(invalid: readonly InvalidObject[]): void {
    const now = new Set<string>();
    for (const i of invalid) {
      const key = `${i.kind}/${i.name}|${i.reason}`;
      now.add(key);
      if (this.#reported.has(key)) continue;
      log.error("invalid object from the API server is left out", {
        kind: i.kind,
        name: i.name,
        reason: i.reason,
      });
    }
    this.#reported.clear();
    for (const k of now) this.#reported.add(k);
  }
}

function unreadableOf(kind: UnreadableObject["kind"], keys: ReadonlyMap<string, string>): UnreadableObject[] {
  return [...keys].map(([key, why]) => {
    const [namespace = "", name = ""] = key.split("/");
    return { kind, namespace, name, why };
  });
}

/** An EndpointSlice's events for the short path: a deleted slice is seen as one with no endpoints. */
function endpointSliceEvents(
  seen: (slice: RawObject) => void,
): Pick<KindInformerOptions, "onObject" | "onGone"> {
  return { onObject: seen, onGone: (slice) => seen({ ...slice, endpoints: [] } as RawObject) };
}
