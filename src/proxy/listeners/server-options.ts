/**
 * What a GatewayServer (server.ts) is built with: the process-wide proxy settings the CLI's `serve`
 * flags set, the engines requests go through, and which front serves HTTP.
 */
import type { RequestHeadLimits } from "../../model/http-syntax.ts";
import type { ProxyProtocolListeners } from "../client/proxy-preamble.ts";
import type { EdgeGuards } from "../request/guards.ts";
import type { RequestObserver } from "../request/observer.ts";

export interface GatewayServerOptions {
  /** Address for listeners whose model address is "" (default `0.0.0.0`). */
  bind?: string;
  /** Upstream time limit to response headers when a route sets none (default 60 000). */
  defaultUpstreamTimeoutMs?: number;
  /** Longest silence between two reads of a response body from an upstream (default: `defaultUpstreamTimeoutMs`). */
  upstreamReadTimeoutMs?: number;
  /** Longest time an upstream may take no byte of a request body (default: `defaultUpstreamTimeoutMs`). */
  upstreamSendTimeoutMs?: number;
  /** Longest silence between two reads of a request body from a client (default 60 000). */
  clientBodyTimeoutMs?: number;
  /** TLS Passthrough and TCP connections with no byte either way for this long are closed; 0: never. */
  streamIdleTimeoutMs?: number;
  /** UDP flows (a client's datagrams) with none either way for this long are closed; 0: never. */
  udpIdleTimeoutMs?: number;
  /** Request bodies up to this size are read whole before an upstream is chosen (default 65 536; 0: none). */
  requestBufferBytes?: number;
  /** Keep request header fields whose name contains `_` (default false: dropped, as nginx does). */
  underscoresInHeaders?: boolean;
  /** Request head size and field count past which the answer is 431 (default 64 KiB, 100 fields). */
  requestHeadLimits?: RequestHeadLimits;
  /** Client connections open at once on the raw front's listeners (default 16 384; 0: no cap). */
  maxConnections?: number;
  /** Client connections open at once from one peer address (default 0: no cap; see admission.ts). */
  maxConnectionsPerPeer?: number;
  /** CIDRs of proxies whose X-Forwarded-For names the client (`--trusted-proxies`; default none). */
  trustedProxies?: readonly string[];
  /** Listeners that read a PROXY header first (`--proxy-protocol`; raw front only; default none). */
  proxyProtocol?: ProxyProtocolListeners;
  /** CIDRs that may send a PROXY header (`--proxy-protocol-from`; default: `trustedProxies`). */
  proxyProtocolFrom?: readonly string[];
  /** `Server` header added to responses that lack one (default `gatehouse`). */
  serverHeader?: string;
  /** Authentication / rate-limit engines for routes that require them (absent: such routes fail closed). */
  guards?: EdgeGuards;
  /** Told about every request (metrics, access log). */
  observer?: RequestObserver;
  /** HTTPS listeners also speak HTTP/2 (ALPN h2; docs/tls.md). Default false. */
  http2?: boolean;
  /**
   * A TLS passthrough listener and an HTTPS listener may share an address and port (raw front only): the
   * passthrough socket reads each ClientHello and hands those no TLSRoute takes to the HTTPS listener
   * (`--enable-ssl-passthrough`). Default false: such a passthrough listener is not served.
   */
  sharedTlsPorts?: boolean;
  /** What serves plain-HTTP listeners: the raw-socket front (src/proxy/raw-front/) or Bun.serve. */
  front?: FrontKind;
  /**
   * Seconds a client connection may stay idle (between requests, in an unfinished head, or not reading
   * a response). Default: the upstream time limit + 5 s, at least 75 (nginx's keepalive_timeout), at most
   * 255 (Bun's). Bun applies it in steps of about 4 seconds.
   */
  idleTimeoutSeconds?: number;
}

export type FrontKind = "raw" | "bun";

/** The default front; GATEHOUSE_FRONT overrides it (the CLI flag `--front` sets it explicitly). */
export function defaultFront(): FrontKind {
  const env = process.env.GATEHOUSE_FRONT;
  return env === "bun" || env === "raw" ? env : "raw";
}
