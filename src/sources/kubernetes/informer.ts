import { type KubernetesObject, ListWatch, Watch } from "@kubernetes/client-node";
import { logger } from "../../observability/logger.ts";
import { describeFailure, type KubeClient } from "./client.ts";
import { type ApiResource, apiVersionOf, resourcePath } from "./resources.ts";

const log = logger.child({ component: "kube-source" });

/** A raw object as the API returned it (after `transform`). */
export type RawObject = KubernetesObject & Record<string, unknown>;

export interface KindInformerOptions {
  /** Any add, update or delete (also those found by a re-list). */
  readonly onChange: () => void;
  /** Each added or updated object as it arrives, before the debounce (activation's short path). */
  readonly onObject?: (obj: RawObject) => void;
  /** Each deleted object as it goes, before the debounce. */
  readonly onGone?: (obj: RawObject) => void;
  /** Applied to every object before it is cached (Secrets: drop the data of unreferenced ones). */
  readonly transform?: (obj: RawObject) => RawObject;
  /** A watch with no byte for this long is dropped and resumed (default 30 s; bookmarks keep it alive). */
  readonly watchIdleMs?: number;
  /** Timeout of one list page (default 30 s). */
  readonly listTimeoutMs?: number;
  /**
   * A kind we only report (resources.ts `skippedResources`): 403 Forbidden on the list counts as "not
   * installed" (empty, retried every 30 s, said once) instead of an error retried and logged with backoff.
   */
  readonly optional?: boolean;
  /**
   * A kind read for one feature only (resources.ts `mayBeForbidden`): 403 Forbidden on the list counts as
   * empty, as for `optional` (retried every 30 s, said once, with a warning), so RBAC from before that
   * feature does not keep the gateway from serving; `forbidden` says so, for the feature to report.
   */
  readonly forbiddenIsEmpty?: boolean;
}

/**
 * List+watch of one kind across all namespaces, on client-node's `ListWatch` (its cache, resourceVersion
 * tracking, re-list after 410 Gone, and reconnect of a watch that ended). Added here:
 * - `allowWatchBookmarks=true`, so a quiet watch keeps a fresh resourceVersion and resumes without a re-list;
 * - a list with a timeout and paging (`limit`/`continue`), through the raw client so objects keep their wire form;
 * - restart with capped exponential backoff and jitter after any error (ListWatch itself stops on one);
 * - `synced`: true once the first full list is in the cache.
 */
export class KindInformer {
  readonly resource: ApiResource;
  readonly #client: KubeClient;
  readonly #opts: KindInformerOptions;
  readonly #lw: ListWatch<RawObject>;
  #synced = false;
  /** The last list answered 404 (the kind is not installed) or a tolerated 403. */
  #absent = false;
  /** The last list answered a tolerated 403. */
  #forbidden = false;
  #stopped = false;
  #failures = 0;
  #retry: ReturnType<typeof setTimeout> | undefined;
  /** What `#foreign` already logged. */
  readonly #ignored = new Set<string>();

  constructor(client: KubeClient, resource: ApiResource, opts: KindInformerOptions) {
    this.resource = resource;
    this.#client = client;
    this.#opts = opts;
    const watch = new Watch(client.config);
    // Private in the typings, public in the code: the idle timeout after which a silent watch is resumed.
    (watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = opts.watchIdleMs ?? 30_000;
    const withBookmarks = {
      watch: (
        path: string,
        query: Record<string, string | number | boolean | undefined>,
        callback: (phase: string, obj: RawObject, raw: unknown) => void,
        done: (err: unknown) => void,
      ) =>
        watch.watch(
          path,
          { ...query, allowWatchBookmarks: true },
          (phase: string, obj: RawObject, raw: unknown) => {
            if (this.#foreign(phase, obj)) return;
            callback(phase, phase === "ADDED" || phase === "MODIFIED" ? this.#prepare(obj) : obj, raw);
          },
          done,
        ),
    } as unknown as Watch;
    this.#lw = new ListWatch<RawObject>(resourcePath(resource), withBookmarks, () => this.#list(), false);
    const onObject = opts.onObject;
    this.#lw.on("add", (obj) => {
      onObject?.(obj);
      this.#changed();
    });
    this.#lw.on("update", (obj) => {
      onObject?.(obj);
      this.#changed();
    });
    const onGone = opts.onGone;
    this.#lw.on("delete", (obj) => {
      onGone?.(obj);
      this.#changed();
    });
    this.#lw.on("error", (err) => this.#failed(err));
  }

  get synced(): boolean {
    return this.#synced;
  }

  /** RBAC does not let us list this kind (only with `optional` or `forbiddenIsEmpty`): it counts as empty. */
  get forbidden(): boolean {
    return this.#forbidden;
  }

  /** The cached objects (after `transform`). */
  list(): RawObject[] {
    return [...this.#lw.list()];
  }

  get(namespace: string, name: string): RawObject | undefined {
    return this.#lw.get(name, this.resource.namespaced ? namespace : undefined);
  }

  start(): void {
    this.#stopped = false;
    void this.#lw.start();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#retry);
    void this.#lw.stop();
  }

  #changed(): void {
    if (this.#synced) this.#opts.onChange();
  }

  #failed(err: unknown): void {
    if (this.#stopped) return;
    this.#failures++;
    if (this.#absent) {
      clearTimeout(this.#retry);
      this.#retry = setTimeout(() => !this.#stopped && void this.#lw.start(), 30_000);
      return;
    }
    const delay = Math.min(30_000, 250 * 2 ** Math.min(this.#failures - 1, 7)) * (0.75 + Math.random() / 2);
    log.warn("list/watch failed; retrying; the last configuration keeps serving", {
      kind: this.resource.kind,
      error: err instanceof Error ? err.message : String(err),
      retryMs: Math.round(delay),
    });
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => {
      if (!this.#stopped) void this.#lw.start();
    }, delay);
  }

  /** The list ListWatch runs first and after 410 Gone; pages of 500. */
  async #list(): Promise<{ items: RawObject[]; metadata: { resourceVersion?: string } }> {
    const items: RawObject[] = [];
    let resourceVersion: string | undefined;
    let next: string | undefined;
    do {
      const q = new URLSearchParams({ limit: "500" });
      if (next) q.set("continue", next);
      const res = await this.#client.get(
        `${resourcePath(this.resource)}?${q}`,
        this.#opts.listTimeoutMs ?? 30_000,
      );
      if (res.status === 403 && !next && (this.#opts.optional || this.#opts.forbiddenIsEmpty)) {
        if (!this.#forbidden)
          log.warn(
            this.#opts.optional
              ? "not allowed to list this kind; its objects are not seen, so not reported"
              : "not allowed to list this kind; treating it as empty (what needs its objects is reported)",
            { kind: this.resource.kind },
          );
        this.#absent = true;
        this.#forbidden = true;
        this.#markSynced();
        return { items: [], metadata: { resourceVersion: "" } };
      }
      if (res.status === 404 && !next) {
        // The kind is not served (its CRD is not installed): it counts as empty, so the rest of the
        // cluster still serves; the watch then fails and the list is retried with backoff.
        // A kind we only report is often not installed (TCPRoute, UDPRoute): no warning for that.
        if (!this.#absent)
          (this.#opts.optional ? log.info : log.warn)(
            "the API server does not serve this kind; treating it as empty",
            {
              kind: this.resource.kind,
            },
          );
        this.#absent = true;
        this.#forbidden = false;
        this.#markSynced();
        return { items: [], metadata: { resourceVersion: "" } };
      }
      this.#absent = false;
      this.#forbidden = false;
      if (res.status !== 200) {
        throw Object.assign(new Error(`list ${this.resource.plural}: ${describeFailure(res)}`), {
          statusCode: res.status,
        });
      }
      const body = res.body as {
        items?: RawObject[];
        metadata?: { resourceVersion?: string; continue?: string };
      };
      for (const obj of body.items ?? []) if (!this.#foreign("ADDED", obj)) items.push(this.#prepare(obj));
      resourceVersion = body.metadata?.resourceVersion;
      next = body.metadata?.continue || undefined;
    } while (next);
    this.#failures = 0;
    this.#markSynced();
    return { items, metadata: { resourceVersion } };
  }

  /**
   * ListWatch fills its cache right after the list promise resolves, in the same microtask run; the timer
   * fires after that, so `synced` is only set once the cache holds the list.
   */
  #markSynced(): void {
    setTimeout(() => {
      const first = !this.#synced;
      this.#synced = true;
      if (first) this.#opts.onChange();
    }, 0);
  }

  /**
   * An event of a type we do not know, or carrying an object of another kind, is ignored (logged once
   * per kind): caching it would let it shadow the real object of that namespace/name.
   */
  #foreign(phase: string, obj: RawObject | undefined): boolean {
    if (phase === "BOOKMARK" || phase === "ERROR") return false;
    const kind = obj?.kind;
    const known = phase === "ADDED" || phase === "MODIFIED" || phase === "DELETED";
    if (
      known &&
      typeof obj?.metadata?.name === "string" &&
      (kind === undefined || kind === this.resource.kind)
    )
      return false;
    const what = known ? `kind ${String(kind)}` : `event type ${phase}`;
    if (!this.#ignored.has(what)) {
      this.#ignored.add(what);
      log.warn("ignoring a watch event the resource cannot carry", { kind: this.resource.kind, event: what });
    }
    return true;
  }

  /** List items come without `kind`/`apiVersion`; the schemas want them. */
  #prepare(obj: RawObject): RawObject {
    const full = {
      ...obj,
      kind: obj.kind ?? this.resource.kind,
      apiVersion: obj.apiVersion ?? apiVersionOf(this.resource),
    };
    return this.#opts.transform ? this.#opts.transform(full) : full;
  }
}
