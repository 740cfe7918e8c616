import type { ServeConfig } from "../../config/config.ts";
import type { Problem } from "../../model/types.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { StatusWriter } from "../../status/writer.ts";
import { selectIngresses } from "../../translate/ingress-class.ts";
import type { KnownKind } from "../schema/index.ts";
import type { ResourceSnapshot } from "../snapshot.ts";
import { KubeClient, loadKubeConfig } from "./client.ts";
import { invalidProblems, invalidStatuses } from "./invalid-status.ts";
import { KubernetesSource } from "./kube-source.ts";
import { LeaderElector } from "./leader.ts";
import { clusterStatuses, publishedAddresses } from "./published-status.ts";

/**
 * `gatehouse serve --kube`: the Kubernetes source, plus (unless `--read-only`, and only in the primary
 * process, not in `--workers` children) leader election and the status writer. The data plane only ever
 * sees snapshots; nothing here can block request serving.
 */
export class ClusterRuntime {
  readonly source: KubernetesSource;
  readonly elector: LeaderElector | undefined;
  readonly writer: StatusWriter | undefined;
  readonly #config: ServeConfig;

  constructor(config: ServeConfig, onSnapshot: (snapshot: ResourceSnapshot) => void) {
    this.#config = config;
    const client = new KubeClient(loadKubeConfig(config.kubeconfig));
    this.source = new KubernetesSource(client, onSnapshot, {
      debounceMs: config["debounce-ms"],
      // No object names the default certificate's Secret; without this its data would be dropped.
      alwaysSecrets: config["default-certificate"] ? [config["default-certificate"]] : [],
    });
    if (config["read-only"] || process.env.GATEHOUSE_WORKER_OF) return;
    this.elector = new LeaderElector(client, {
      namespace: config["leader-election-namespace"],
      name: config["leader-election-name"],
      leaseDurationMs: config["lease-duration-ms"],
      onStartedLeading: () => this.writer?.kick(),
    });
    const elector = this.elector;
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
    await this.source.start();
  }

  /** Objects the API returned that failed validation (left out), for `/debug/problems`. */
  problems(): Problem[] {
    return invalidProblems(this.source.invalid);
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
    this.writer.update([...clusterStatuses(statuses, ours, publishedAddresses(given, service)), ...invalid]);
  }

  async stop(): Promise<void> {
    this.source.stop();
    await this.writer?.stop();
    await this.elector?.stop();
  }
}
