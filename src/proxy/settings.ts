/**
 * What every listener of a server shares (ProxySettings) and one listener's live state: the contract
 * between the listeners that own them and every request path that reads them (the Bun.serve app, the
 * raw front, HTTP/2), kept apart so that none of those has to import another.
 */

import type { RequestHeadLimits } from "../model/http-syntax.ts";
import { type ProxyProtocolListeners, readsProxyHeader } from "./client/proxy-preamble.ts";
import type { TrustedProxies } from "./client/trusted-proxies.ts";
import type { ConnectionAdmission } from "./raw-front/admission.ts";
import type { EdgeGuards } from "./request/guards.ts";
import type { RequestObserver } from "./request/observer.ts";
import type { ListenerTable } from "./table.ts";

/** Settings shared by every listener of a server. */
export interface ProxySettings {
  readonly defaultUpstreamTimeoutMs: number;
  /**
   * Longest silence between two reads of an upstream's response body, whole ms (nginx's
   * `proxy_read_timeout`; Infinity: none). Past it the response is cut.
   */
  readonly upstreamReadTimeoutMs: number;
  /**
   * Longest time an upstream may take no byte of the request (a body it does not read), whole ms
   * (nginx's `proxy_send_timeout`; Infinity: none): 504 before the response, a cut after.
   */
  readonly upstreamSendTimeoutMs: number;
  /**
   * Longest silence between two reads of a client's request body, seconds (nginx's
   * `client_body_timeout`); not counted while the upstream is the one not taking the body.
   */
  readonly clientBodyTimeoutSeconds: number;
  /**
   * Request bodies with a Content-Length up to this many bytes are read whole before an upstream
   * connection is taken (nginx's `proxy_request_buffering`), so a slow sender holds no backend
   * connection; larger ones, chunked ones and those that expect `100 Continue` are streamed. 0: none.
   */
  readonly requestBufferBytes: number;
  /**
   * Keep request header fields whose name contains `_` (nginx's `underscores_in_headers on`). False:
   * both fronts drop them before routing, guards or forwarding read any field (nginx's default).
   */
  readonly underscoresInHeaders: boolean;
  /** Request heads past these are 431 on both fronts (`--max-request-header-bytes`, `-count`). */
  readonly headLimits: RequestHeadLimits;
  readonly serverHeader: string;
  /** Bun's `idleTimeout` of the listeners, seconds; it also runs while a request waits for us. */
  readonly idleTimeoutSeconds: number;
  /** Authentication / rate limiting engines for routes that ask for them. */
  readonly guards?: EdgeGuards;
  /** Metrics and access log; absent in tests that do not need them. */
  readonly observer?: RequestObserver;
  /** Caps on client connections (raw front); absent: none. */
  readonly admission?: ConnectionAdmission;
  /** `--trusted-proxies`: peers whose X-Forwarded-For names the client (client/trusted-proxies.ts). */
  readonly trustedProxies?: TrustedProxies;
  /** `--proxy-protocol`: the raw front's listeners that read a PROXY header first (client/proxy-preamble.ts). */
  readonly proxyProtocol?: ProxyProtocolListeners;
  /** `--proxy-protocol-from`: the peers that may send a PROXY header; absent: `trustedProxies`. */
  readonly proxyProtocolFrom?: TrustedProxies;
}

/**
 * The proxies whose X-Forwarded-For names the client of a request on `state`'s listener: none on a
 * listener that reads PROXY headers, where the header alone names the client (ingress-nginx's
 * `real_ip_header proxy_protocol`): an L4 balancer passes the client's own X-Forwarded-For on untouched.
 */
export function forwardedForTrust(state: ListenerState): TrustedProxies | undefined {
  return listenerReadsProxyHeader(state) ? undefined : state.settings.trustedProxies;
}

/** `state`'s listener reads a PROXY header first (`--proxy-protocol`). */
export function listenerReadsProxyHeader(state: ListenerState): boolean {
  return readsProxyHeader(state.settings.proxyProtocol, state.table.port);
}

/** The peers that may send a PROXY header (`--proxy-protocol-from`, else `--trusted-proxies`). */
export function proxyHeaderSenders(
  s: Pick<ProxySettings, "proxyProtocolFrom" | "trustedProxies">,
): TrustedProxies | undefined {
  return s.proxyProtocolFrom ?? s.trustedProxies;
}

/** A listener's live state: `table` is replaced by one assignment on reload. */
export interface ListenerState {
  table: ListenerTable;
  /** The port actually bound (differs from the model only when the model says 0). */
  boundPort: number;
  readonly settings: ProxySettings;
}

/**
 * Bun's socket timers (`socket.timeout(s)`) fire on a 4-second sweep: a timeout of s seconds ends between
 * s - 4 and s seconds later. A limit that must never cut a client short (the body timeout) asks for this
 * much more, and so ends between s and s + 4 seconds.
 */
export const SOCKET_TIMER_STEP_S = 4;
