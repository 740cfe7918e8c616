import {
  type HttpMethod,
  IsomorphicFetchHttpLibrary,
  KubeConfig,
  RequestContext,
} from "@kubernetes/client-node";

/** The answer of one API call: HTTP status and the parsed JSON body (undefined when not JSON). */
export interface KubeResponse {
  readonly status: number;
  readonly body: unknown;
}

export interface KubeRequest {
  readonly body?: unknown;
  /** For PATCH: `application/merge-patch+json` (default), `application/json-patch+json`, … */
  readonly contentType?: string;
  /** Abort after this long (default 10 s): an API server that hangs must not hang its caller. */
  readonly timeoutMs?: number;
}

/**
 * Load the client configuration: `--kubeconfig FILE` when given; otherwise the in-cluster service account
 * when running in a pod (`KUBERNETES_SERVICE_HOST` set); otherwise `$KUBECONFIG` or `~/.kube/config`.
 */
export function loadKubeConfig(kubeconfig?: string): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error("the kubeconfig names no current cluster");
  return kc;
}

/**
 * Raw JSON calls through client-node's own transport and authentication (TLS, tokens, exec plugins), so
 * objects arrive exactly as the API sends them: the typed API classes would turn timestamps into Dates
 * and drop `kind`/`apiVersion`, and the schemas judge the wire form. Non-2xx answers are returned, not
 * thrown; only transport failures and timeouts throw.
 */
export class KubeClient {
  readonly config: KubeConfig;
  readonly #http = new IsomorphicFetchHttpLibrary();

  constructor(config: KubeConfig) {
    this.config = config;
  }

  async request(method: HttpMethod, path: string, req: KubeRequest = {}): Promise<KubeResponse> {
    const server = this.config.getCurrentCluster()?.server ?? "";
    const ctx = new RequestContext(`${server.replace(/\/$/, "")}${path}`, method);
    ctx.setHeaderParam("Accept", "application/json");
    if (req.body !== undefined) {
      ctx.setHeaderParam("Content-Type", req.contentType ?? "application/json");
      ctx.setBody(JSON.stringify(req.body));
    }
    ctx.setSignal(AbortSignal.timeout(req.timeoutMs ?? 10_000));
    await this.config.applySecurityAuthentication(ctx);
    const res = await this.#http.send(ctx).toPromise();
    const text = await res.body.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.httpStatusCode, body };
  }

  get(path: string, timeoutMs?: number): Promise<KubeResponse> {
    return this.request("GET", path, { timeoutMs });
  }
}

/** A short description of a failed answer, for logs: `409 Conflict: the object has been modified`. */
export function describeFailure(res: KubeResponse): string {
  const b = (res.body ?? {}) as { reason?: string; message?: string };
  return `${res.status}${b.reason ? ` ${b.reason}` : ""}${b.message ? `: ${b.message}` : ""}`;
}
