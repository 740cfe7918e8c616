/**
 * The one route model. Every source (Ingress, Gateway API, later policies) is translated into these
 * types, and the data plane compiles them into a RouteTable. Plain readonly data only: no classes,
 * RegExp objects or functions, so a model can be dumped as YAML, diffed in golden tests and compared.
 */
import type { Backend } from "./backends.ts";
import type { Listener } from "./http-routes.ts";
import type { PassthroughListener } from "./passthrough.ts";

/** The whole configuration the data plane serves. */
export interface GatewayModel {
  /** Every listener to open, each with the virtual hosts it serves. */
  readonly listeners: readonly Listener[];
  /** Every upstream the routes point at, keyed by `Backend.id`. Routes refer to backends by id so that
   * endpoint churn changes one entry, not every route. */
  readonly backends: Readonly<Record<string, Backend>>;
  /**
   * Listeners that route whole TLS connections by the ClientHello's SNI without terminating them.
   * Absent (rather than empty) when there are none, so models without TLSRoutes dump as before.
   */
  readonly passthroughListeners?: readonly PassthroughListener[];
  /**
   * The bodies the gateway answers its own errors with (`--error-pages-configmap`), by status code
   * (`"404"`), in place of its plain-text ones; both fronts. Absent: none configured.
   */
  readonly errorBodies?: Readonly<Record<string, ErrorBody>>;
}

/** One error body from the error-pages ConfigMap: sent as it is written, with its key's media type. */
export interface ErrorBody {
  /** From the key's extension: `text/html; charset=utf-8`, `application/json`, … */
  readonly contentType: string;
  readonly body: string;
}
