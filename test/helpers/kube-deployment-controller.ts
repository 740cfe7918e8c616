/**
 * A Deployment controller for the test API server, enough for scale-to-zero tests: when a Deployment's
 * `spec.replicas` goes from 0 to 1 or more, a "pod" starts (a real listener, `startPod`) and, after
 * `readyDelayMs`, the Service's EndpointSlice is published with it as a ready endpoint; when replicas go
 * to 0, the slice is emptied and the pod stopped. `readyAt` records when each slice went ready
 * (performance.now(), this process), so a test can measure what a held request added beyond that moment.
 */
import type { KubeApiServer, Obj } from "./kube-api-server.ts";

export interface Pod {
  readonly port: number;
  stop(): void;
}

export interface ControllerOptions {
  /** Deployment name → the Service whose EndpointSlice its pods appear in. */
  readonly services: Readonly<Record<string, string>>;
  /** Between the scale-up and the slice showing the pod ready (a container's start and readiness probe). */
  readonly readyDelayMs: number;
  readonly startPod: (deployment: string) => Pod;
}

export class DeploymentController {
  /** performance.now() of each slice going ready, newest last. */
  readonly readyAt: number[] = [];
  /** Scale-ups and scale-downs seen, in order (`up:NAME`, `down:NAME`). */
  readonly events: string[] = [];
  readonly #api: KubeApiServer;
  readonly #opts: ControllerOptions;
  readonly #pods = new Map<string, Pod>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #off: () => void;

  constructor(api: KubeApiServer, opts: ControllerOptions) {
    this.#api = api;
    this.#opts = opts;
    this.#off = api.store.onEvent((r, e) => {
      if (r.kind !== "Deployment" || e.type === "DELETED") return;
      const before = e.old?.spec?.replicas ?? 0;
      const after = e.object.spec?.replicas ?? 1;
      const name = e.object.metadata.name as string;
      if (before === 0 && after > 0) this.#up(name, e.object.metadata.namespace);
      else if (before > 0 && after === 0) this.#down(name, e.object.metadata.namespace);
    });
  }

  /** The Deployment object, scaled to `replicas` (0: asleep). */
  static deployment(name: string, namespace: string, replicas: number): Obj {
    return {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace },
      spec: { replicas, selector: { matchLabels: { app: name } } },
    };
  }

  stop(): void {
    this.#off();
    for (const t of this.#timers) clearTimeout(t);
    for (const p of this.#pods.values()) p.stop();
    this.#pods.clear();
  }

  #up(name: string, namespace: string): void {
    this.events.push(`up:${name}`);
    const pod = this.#opts.startPod(name);
    this.#pods.set(name, pod);
    const t = setTimeout(() => {
      this.#timers.delete(t);
      if (this.#pods.get(name) !== pod) return;
      this.readyAt.push(performance.now());
      this.#api.apply(this.#slice(name, namespace, [pod.port]));
    }, this.#opts.readyDelayMs);
    this.#timers.add(t);
  }

  #down(name: string, namespace: string): void {
    this.events.push(`down:${name}`);
    this.#api.apply(this.#slice(name, namespace, []));
    this.#pods.get(name)?.stop();
    this.#pods.delete(name);
  }

  #slice(deployment: string, namespace: string, ports: readonly number[]): Obj {
    const service = this.#opts.services[deployment] ?? deployment;
    return {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: `${service}-pods`, namespace, labels: { "kubernetes.io/service-name": service } },
      addressType: "IPv4",
      endpoints: ports.map(() => ({ addresses: ["127.0.0.1"], conditions: { ready: true } })),
      ports: [{ name: "http", port: ports[0] ?? 1, protocol: "TCP" }],
    };
  }
}
