/**
 * A small API server that speaks the Kubernetes wire protocol for the kinds Gatehouse uses, so tests
 * drive the real `@kubernetes/client-node` through a kubeconfig: list (with resourceVersion, label
 * selectors, limit/continue), watch streams (ADDED/MODIFIED/DELETED/BOOKMARK, resume from a
 * resourceVersion, an ERROR event with a 410 Expired Status when it is too old — as the real API server
 * does on a watch), get/create/update/patch/delete, the status subresource, optimistic concurrency (409)
 * and Leases, and the scale subresource of Deployments and StatefulSets (kube-api-scale.ts). Plain HTTP on 127.0.0.1 (client-node accepts `http://` only with insecure-skip-tls-verify,
 * which the written kubeconfig sets). Faults for tests: answer 500, hang, cut watches, restart, compact.
 */
import { writeFile } from "node:fs/promises";
import { stringify } from "yaml";
import { applyPatch } from "./kube-api-patch.ts";
import { serveScale } from "./kube-api-scale.ts";
import {
  ApiError,
  apiVersionOf,
  defaultResources,
  type EventType,
  type Obj,
  type ResourceDef,
  Store,
} from "./kube-api-store.ts";
import { parseSelector, type WatchTarget, watchResponse } from "./kube-api-watch.ts";

export { ApiError, defaultResources, type Obj, type ResourceDef } from "./kube-api-store.ts";
export { parseSelector } from "./kube-api-watch.ts";

export interface KubeApiServerOptions {
  /** Default 0: a free port. */
  readonly port?: number;
  readonly resources?: readonly ResourceDef[];
  /** Events kept per resource; a watch from before the oldest kept one gets 410. Default 1000. */
  readonly historyLimit?: number;
  /** How often watches that asked for bookmarks get one. Default 1000 ms. */
  readonly bookmarkIntervalMs?: number;
  /** Bearer tokens accepted; the first goes into `kubeconfig()`. Calls record which one was used. */
  readonly tokens?: readonly string[];
}

/** One API call as RBAC sees it: verb, resource (`plural.group`), subresource. */
export interface RecordedCall {
  readonly verb: "get" | "list" | "watch" | "create" | "update" | "patch" | "delete";
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  /** The bearer token of the caller (tells gateway processes apart). */
  readonly token: string;
  /** The object named in the path (get, update, patch, delete). */
  readonly name?: string;
}

type Fault = "none" | "error" | "hang";

interface Target extends WatchTarget {
  readonly name?: string;
  readonly sub?: string;
}

export class KubeApiServer {
  readonly store: Store;
  readonly calls: RecordedCall[] = [];
  readonly #opts: Required<Omit<KubeApiServerOptions, "resources" | "historyLimit" | "port">>;
  #server: ReturnType<typeof Bun.serve> | undefined;
  #port = 0;
  #fault: Fault = "none";
  #hung: (() => void)[] = [];
  readonly #watches = new Set<() => void>();
  readonly #delays = new Set<{ match: (c: RecordedCall) => boolean; ms: number }>();
  readonly #forbidden = new Set<(c: RecordedCall) => boolean>();

  private constructor(opts: KubeApiServerOptions) {
    this.store = new Store(opts.resources ?? defaultResources, opts.historyLimit ?? 1000);
    this.#opts = {
      bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 1000,
      tokens: opts.tokens ?? ["gatehouse-test"],
    };
  }

  static async start(opts: KubeApiServerOptions = {}): Promise<KubeApiServer> {
    const s = new KubeApiServer(opts);
    s.#listen(opts.port ?? 0);
    return s;
  }

  get port(): number {
    return this.#port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Open watch streams right now. */
  get watchCount(): number {
    return this.#watches.size;
  }

  /** A kubeconfig for this server, as `kubectl` and client-node read it. */
  kubeconfig(token = this.#opts.tokens[0] as string): string {
    return stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "test", cluster: { server: this.url, "insecure-skip-tls-verify": true } }],
      users: [{ name: "test", user: { token } }],
      contexts: [{ name: "test", context: { cluster: "test", user: "test", namespace: "default" } }],
      "current-context": "test",
    });
  }

  async writeKubeconfig(path: string, token?: string): Promise<string> {
    await writeFile(path, this.kubeconfig(token));
    return path;
  }

  resource(kind: string): ResourceDef {
    const r = this.store.resources.find((d) => d.kind === kind);
    if (!r) throw new Error(`the test API server does not serve ${kind}`);
    return r;
  }

  /** Create an object directly (as another client would); namespace defaults to `default`. */
  create(obj: Obj): Obj {
    return this.store.create(this.resource(obj.kind), obj.metadata?.namespace ?? "default", obj);
  }

  /** Create, or replace the spec of the existing object (its status is kept). */
  apply(obj: Obj): Obj {
    const r = this.resource(obj.kind);
    const ns = obj.metadata?.namespace ?? "default";
    try {
      const old = this.store.get(r, ns, obj.metadata.name);
      return this.store.update(r, ns, obj.metadata.name, {
        ...obj,
        metadata: { ...old.metadata, ...obj.metadata },
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return this.store.create(r, ns, obj);
      throw err;
    }
  }

  get(kind: string, namespace: string, name: string): Obj {
    return this.store.get(this.resource(kind), namespace, name);
  }

  remove(kind: string, namespace: string, name: string): Obj {
    return this.store.delete(this.resource(kind), namespace, name);
  }

  /** "error": every request answers 500; "hang": requests get no answer until the fault is cleared. */
  setFault(fault: Fault): void {
    this.#fault = fault;
    if (fault !== "hang") {
      const hung = this.#hung;
      this.#hung = [];
      for (const release of hung) release();
    }
  }

  /**
   * Answer calls that `match` only after `ms` (a slow list, a Secret read that takes its time); returns
   * a function that removes the delay (calls already waiting still wait).
   */
  delay(match: (c: RecordedCall) => boolean, ms: number): () => void {
    const d = { match, ms };
    this.#delays.add(d);
    return () => this.#delays.delete(d);
  }

  /**
   * Answer calls that `match` 403 Forbidden, as RBAC does for a grant the caller lacks (an old
   * ClusterRole); returns a function that lifts it.
   */
  forbid(match: (c: RecordedCall) => boolean): () => void {
    this.#forbidden.add(match);
    return () => this.#forbidden.delete(match);
  }

  /** Send one raw event, as is, on every open watch of `kind` (e.g. an object of another kind). */
  injectWatchEvent(kind: string, type: string, object: Obj): void {
    this.store.emit(this.resource(kind), { type: type as EventType, rv: this.store.rv, object });
  }

  /** End every open watch stream (the clients see a clean end of stream, as after an apiserver timeout). */
  cutWatches(): void {
    for (const close of [...this.#watches]) close();
  }

  /** Stop listening (dropping every connection), stay down for `downMs`, listen again on the same port. */
  async restart(downMs = 0): Promise<void> {
    this.cutWatches();
    this.#server?.stop(true);
    if (downMs) await Bun.sleep(downMs);
    for (let i = 0; ; i++) {
      try {
        this.#listen(this.#port);
        return;
      } catch (err) {
        if (i > 50) throw err;
        await Bun.sleep(20);
      }
    }
  }

  async stop(): Promise<void> {
    this.setFault("none");
    this.cutWatches();
    await this.#server?.stop(true);
  }

  #listen(port: number): void {
    this.#server = Bun.serve({
      hostname: "127.0.0.1",
      port,
      idleTimeout: 0, // watches may stay quiet for long
      fetch: (req) => this.#handle(req),
    });
    this.#port = this.#server.port ?? port;
  }

  async #handle(req: Request): Promise<Response> {
    if (this.#fault === "hang") await new Promise<void>((resolve) => this.#hung.push(resolve));
    if (this.#fault === "error") return status(new ApiError(500, "InternalError", "injected failure"));
    const token = (req.headers.get("authorization") ?? "").replace(/^Bearer /, "");
    if (!this.#opts.tokens.includes(token)) return status(new ApiError(401, "Unauthorized", "Unauthorized"));
    const url = new URL(req.url);
    if (url.pathname === "/version")
      return Response.json({ major: "1", minor: "33", gitVersion: "v1.33.0-gatehouse-test" });
    const t = this.#route(url.pathname);
    if (!t)
      return status(
        new ApiError(404, "NotFound", `the server could not find the requested resource (${url.pathname})`),
      );
    try {
      return await this.#serve(req, url, t, token);
    } catch (err) {
      if (err instanceof ApiError) return status(err);
      return status(new ApiError(500, "InternalError", String(err)));
    }
  }

  /** `/api/v1/[namespaces/NS/]PLURAL[/NAME[/SUB]]` and `/apis/GROUP/VERSION/…`. */
  #route(path: string): Target | undefined {
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    let group: string;
    let version: string;
    let rest: string[];
    if (parts[0] === "api") [group, version, rest] = ["", parts[1] ?? "", parts.slice(2)];
    else if (parts[0] === "apis") [group, version, rest] = [parts[1] ?? "", parts[2] ?? "", parts.slice(3)];
    else return undefined;
    let namespace = "";
    if (rest[0] === "namespaces" && rest.length >= 3) {
      namespace = rest[1] as string;
      rest = rest.slice(2);
    }
    const r = this.store.resources.find(
      (d) => d.group === group && d.version === version && d.plural === rest[0],
    );
    const sub = rest[2];
    if (
      !r ||
      rest.length > 3 ||
      (sub !== undefined && !((sub === "status" && r.status) || (sub === "scale" && r.scale)))
    )
      return undefined;
    if (!r.namespaced && namespace) return undefined;
    return { r, namespace, name: rest[1], sub: rest[2] };
  }

  async #serve(req: Request, url: URL, t: Target, token: string): Promise<Response> {
    const { r, namespace, name, sub } = t;
    const record = async (verb: RecordedCall["verb"]) => {
      const call: RecordedCall = {
        verb,
        group: r.group,
        resource: r.plural,
        ...(sub ? { subresource: sub } : {}),
        token,
        ...(name !== undefined ? { name } : {}),
      };
      this.calls.push(call);
      if ([...this.#forbidden].some((m) => m(call)))
        throw new ApiError(403, "Forbidden", `${verb} ${r.plural} is forbidden (test RBAC)`);
      const ms = Math.max(0, ...[...this.#delays].filter((d) => d.match(call)).map((d) => d.ms));
      if (ms > 0) await Bun.sleep(ms);
    };
    const q = url.searchParams;
    if (sub === "scale" && name !== undefined) {
      await record(req.method === "GET" ? "get" : req.method === "PUT" ? "update" : "patch");
      return serveScale(this.store, r, namespace, name, req);
    }
    if (name === undefined) {
      if (req.method === "GET" && q.get("watch") === "true") {
        await record("watch");
        return this.#watch(t, q);
      }
      if (req.method === "GET") {
        await record("list");
        return Response.json(this.#list(t, q));
      }
      if (req.method === "POST") {
        await record("create");
        return Response.json(this.store.create(r, namespace, await body(req)), { status: 201 });
      }
      throw new ApiError(405, "MethodNotAllowed", `${req.method} is not allowed on a collection`);
    }
    switch (req.method) {
      case "GET":
        await record("get");
        return Response.json(this.store.get(r, namespace, name));
      case "PUT":
        await record("update");
        return Response.json(this.#update(t, name, await body(req), sub));
      case "PATCH": {
        await record("patch");
        const current = this.store.get(r, namespace, name);
        const patched = applyPatch(current, req.headers.get("content-type") ?? "", await req.text());
        // A resourceVersion the patch itself sets is a precondition, as on the real server.
        const rv = patched.metadata?.resourceVersion;
        const preconditioned = { ...patched, metadata: { ...patched.metadata, resourceVersion: rv } };
        return Response.json(this.#update(t, name, preconditioned, sub));
      }
      case "DELETE":
        await record("delete");
        return Response.json(this.store.delete(r, namespace, name));
      default:
        throw new ApiError(405, "MethodNotAllowed", `${req.method} is not allowed`);
    }
  }

  /** The main resource ignores `.status` when a status subresource exists; `/status` changes only it. */
  #update(t: Target, name: string, obj: Obj, sub: string | undefined): Obj {
    return this.store.update(t.r, t.namespace, name, obj, sub === "status" ? "status" : undefined);
  }

  #list(t: Target, q: URLSearchParams): Obj {
    const selector = parseSelector(q.get("labelSelector") ?? "");
    const all = this.store
      .list(t.r, t.namespace || undefined)
      .filter((o) => selector(o.metadata?.labels ?? {}));
    const limit = Number(q.get("limit") ?? 0);
    const start = Number(q.get("continue") ?? 0) || 0;
    const page = limit > 0 ? all.slice(start, start + limit) : all.slice(start);
    const more = limit > 0 && start + limit < all.length;
    // Built-in kinds come without kind/apiVersion on list items; custom resources keep them.
    const builtIn = builtInGroups.has(t.r.group);
    const items = page.map((o) => {
      if (!builtIn) return o;
      const { kind: _k, apiVersion: _a, ...rest } = o;
      return rest;
    });
    return {
      kind: `${t.r.kind}List`,
      apiVersion: apiVersionOf(t.r),
      metadata: {
        resourceVersion: String(this.store.rv),
        ...(more ? { continue: String(start + limit) } : {}),
      },
      items,
    };
  }

  #watch(t: Target, q: URLSearchParams): Response {
    return watchResponse(this.store, t, q, this.#watches, this.#opts.bookmarkIntervalMs);
  }
}

const builtInGroups = new Set(["", "networking.k8s.io", "discovery.k8s.io", "coordination.k8s.io"]);

function status(err: ApiError): Response {
  return Response.json(err.toStatus(), { status: err.code });
}

async function body(req: Request): Promise<Obj> {
  try {
    return (await req.json()) as Obj;
  } catch (err) {
    throw new ApiError(400, "BadRequest", `invalid JSON body: ${(err as Error).message}`);
  }
}
