import type { ServeConfig } from "../../config/config.ts";
import type { GatewayModel, Problem } from "../../model/index.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { StatusWriter } from "../../status/writer.ts";
import { selectIngresses } from "../../translate/ingress/ingress-class.ts";
import type { KnownKind } from "../schema/index.ts";
import { skippedProblem } from "../skipped.ts";
import type { ResourceSnapshot } from "../snapshot.ts";
import { KubeClient, loadKubeConfig } from "./client.ts";
import {
  desiredServices,
  GatewayServices,
  gatewayServiceName,
  withInternalPorts,
} from "./gateway-services.ts";
import type { RawObject } from "./informer.ts";
import { invalidProblems, invalidStatuses } from "./invalid-status.ts";
import { KubernetesSource } from "./kube-source.ts";
import { LeaderElector } from "./leader.ts";
import { clusterStatuses, publishedAddresses } from "./published-status.ts";
import { SessionKeySecret } from "./session-key-secret.ts";

/**
 * `gatehouse serve --kube`: the Kubernetes source, plus (unless `--read-only`, and only in the primary
 * process, not in `--workers` children) leader election and the status writer. The data plane only ever
 * sees snapshots; nothing here can block request serving.
 */
export class ClusterRuntime {
  readonly source: KubernetesSource;
  readonly elector: LeaderElector | undefined;
  readonly writer: StatusWriter | undefined;
  /** The leader's managed Service per Gateway (`--gateway-services`). */
  readonly services: GatewayServices | undefined;
  /** The API client (activation scales workloads through it, sources/kubernetes/workload-scaler.ts). */
  readonly client: KubeClient;
  /** The shared keys of timed session tokens, read (and by the leader created) in our namespace. */
  readonly sessionKeys: SessionKeySecret;
  readonly #config: ServeConfig;

  constructor(
    config: ServeConfig,
    onSnapshot: (snapshot: ResourceSnapshot) => void,
    /** Each EndpointSlice event as it arrives (activation's short path, kube-source.ts). */
    onEndpointSlice?: (slice: RawObject) => void,
  ) {
    this.#config = config;
    const client = new KubeClient(loadKubeConfig(config.kubeconfig));
    this.client = client;
    this.source = new KubernetesSource(client, onSnapshot, {
      ...(onEndpointSlice ? { onEndpointSlice } : {}),
      debounceMs: config["debounce-ms"],
      // No object names the default certificate's Secret; without this its data would be dropped.
      alwaysSecrets: config["default-certificate"] ? [config["default-certificate"]] : [],
      alwaysConfigMaps: config["error-pages-configmap"] ? [config["error-pages-configmap"]] : [],
      gatewayController: config["gateway-controller"],
    });
    let leader = () => false;
    this.sessionKeys = new SessionKeySecret(client, config["leader-election-namespace"], () => leader());
    if (config["read-only"] || process.env.GATEHOUSE_WORKER_OF) return;
    this.elector = new LeaderElector(client, {
      namespace: config["leader-election-namespace"],
      name: config["leader-election-name"],
      leaseDurationMs: config["lease-duration-ms"],
      onStartedLeading: () => {
        this.writer?.kick();
        this.services?.kick();
        this.sessionKeys.kick();
      },
    });
    const elector = this.elector;
    leader = () => elector.isLeader;
    if (config["gateway-services"] !== "none")
      this.services = new GatewayServices(
        client,
        () => this.source.objects("Service"),
        () => elector.isLeader,
      );
    this.writer = new StatusWriter({
      client,
      lookup: (kind, ns, name) => this.source.lookup(kind as KnownKind, ns, name),
      controllerName: config["gateway-controller"],
      isLeader: () => elector.isLeader,
    });
  }

  /** Resolves after the first full sync has been delivered; leader election starts with it. */
  async start(): Promise<void> {
    this.elector?.start();
    await Promise.all([this.source.start(), this.sessionKeys.start()]);
  }

  /** What the proxy serves: Gateway listeners on their internal ports (`--gateway-port-offset`). */
  served(model: GatewayModel): GatewayModel {
    return withInternalPorts(model, this.#config["gateway-port-offset"]);
  }

  /**
   * Objects the API returned that failed validation (left out), and objects of Gateway API kinds we do
   * not serve (skipped), for `/debug/problems`.
   */
  problems(): Problem[] {
    return [...invalidProblems(this.source.invalid), ...this.source.skipped.map(skippedProblem)];
  }

  /**
   * After each applied snapshot: hand the statuses (completed with addresses, plus conditions on
   * invalid objects of ours) to the writer.
   */
  applied(snapshot: ResourceSnapshot, statuses: readonly ObjectStatus[]): void {
    if (!this.writer) return;
    const c = this.#config;
    const [ns, name] = (c["publish-service"] ?? "/").split("/") as [string, string];
    const service = c["publish-service"] ? this.source.lookup("Service", ns, name) : undefined;
    const given = (c["status-address"] ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const ours = selectIngresses(snapshot.ingresses, snapshot.ingressClasses, {
      ingressClass: c["ingress-class"],
      ingressController: c["ingress-controller"],
      watchIngressWithoutClass: c["watch-ingress-without-class"],
    });
    const invalid = invalidStatuses(this.source.invalid, statuses, c["gateway-controller"]);
    const withServices = this.#gatewayServices(snapshot, statuses, ns, service);
    this.writer.update([
      ...clusterStatuses(withServices, ours, publishedAddresses(given, service)),
      ...invalid,
    ]);
  }

  /**
   * With `--gateway-services`: hand the leader the Services our Gateways need (beside the fleet's
   * `--publish-service`, with its selector), and give each Gateway its own Service's address.
   */
  #gatewayServices(
    snapshot: ResourceSnapshot,
    statuses: readonly ObjectStatus[],
    fleetNamespace: string,
    fleet: RawObject | undefined,
  ): readonly ObjectStatus[] {
    const selector = (fleet?.spec as { selector?: Record<string, string> } | undefined)?.selector;
    if (!this.services || !selector) return statuses;
    const ours = new Set(
      statuses
        .filter((s) => s.target.kind === "Gateway")
        .map((s) => `${s.target.namespace}/${s.target.name}`),
    );
    const gateways = snapshot.gateways.filter((g) =>
      ours.has(`${g.metadata.namespace ?? "default"}/${g.metadata.name}`),
    );
    const uid = (g: { metadata: { namespace?: string; name: string } }) =>
      this.source.lookup("Gateway", g.metadata.namespace ?? "default", g.metadata.name)?.metadata?.uid;
    const c = this.#config;
    this.services.update(
      desiredServices(
        gateways,
        { namespace: fleetNamespace, selector },
        c["gateway-services"],
        c["gateway-port-offset"],
        uid,
      ),
    );
    return statuses.map((s) => {
      if (s.target.kind !== "Gateway" || ((s.status.addresses as unknown[] | undefined)?.length ?? 0) > 0)
        return s;
      const svc = this.source.lookup(
        "Service",
        fleetNamespace,
        gatewayServiceName(s.target.namespace, s.target.name),
      );
      const addresses = publishedAddresses([], svc).map((a) =>
        a.ip ? { type: "IPAddress", value: a.ip } : { type: "Hostname", value: a.hostname as string },
      );
      return addresses.length ? { ...s, status: { ...s.status, addresses } } : s;
    });
  }

  async stop(): Promise<void> {
    this.source.stop();
    this.sessionKeys.stop();
    await this.services?.stop();
    await this.writer?.stop();
    await this.elector?.stop();
  }
}
