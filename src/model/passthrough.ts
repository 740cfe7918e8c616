/**
 * TLS passthrough: Gateway listeners of protocol TLS, mode Passthrough, and their TLSRoutes; and TCP
 * listeners with their TCPRoutes. These listeners never parse HTTP, so they share nothing with `Listener`
 * but the backends they forward to.
 */
import type { TLSCertificate } from "./http-routes.ts";
import type { SourceRef } from "./source.ts";

/** One Gateway listener of protocol TLS with `tls.mode: Passthrough`: a byte pipe chosen by SNI. */
export interface PassthroughListener {
  /** Stable name: `gateway/<ns>/<name>/<listener>`. */
  readonly name: string;
  /** Address to bind; "" means the process-wide `--bind` address. */
  readonly address: string;
  /** Port the listener binds. */
  readonly port: number;
  /**
   * The listener's own hostname (`*.` wildcards matching one or more labels); absent means every SNI
   * name. When passthrough listeners share an address and port, a connection belongs to the listener
   * whose hostname matches its SNI most specifically, and only that listener's routes serve it.
   */
  readonly hostname?: string;
  /** The Gateway that asked for this listener. */
  readonly source: SourceRef;
  /**
   * `TCP`: a Gateway listener of protocol TCP and its TCPRoutes. No ClientHello is read: every connection
   * goes to the first route (the oldest; its hostnames are `Any`). `UDP`: a UDP listener and its
   * UDPRoutes, each client's datagrams (by source address and port) a flow relayed to one endpoint of the
   * first route. Absent: TLS Passthrough, routed by SNI. A TCP and a TLS listener never share a socket
   * (ProtocolConflict); a UDP socket shares nothing with them.
   */
  readonly protocol?: "TCP" | "UDP";
  /**
   * A TLS listener in mode Terminate: the gateway completes the handshake with these certificates (SNI
   * picks one, the first is the fallback) and pipes the decrypted bytes to the route's backend; TLSRoutes
   * choose by SNI as for Passthrough. Such a listener may share its port with Passthrough ones (mixed
   * mode): the SNI picks the listener first. Absent: the bytes are passed through untouched.
   */
  readonly terminate?: { readonly certificates: readonly TLSCertificate[] };
  /**
   * Routes in precedence order (oldest TLSRoute first, then namespace/name). For an SNI name the data
   * plane takes the first route with an `Exact` hostname equal to it, else the first with the longest
   * matching wildcard, else the first `Any` route; a connection no route takes is closed.
   */
  readonly routes: readonly SNIRoute[];
}

/** One TLSRoute (or TCPRoute) as attached to one passthrough (or TCP) listener. */
export interface SNIRoute {
  /** Stable unique name: `tlsroute/<ns>/<name>` (`tcproute/<ns>/<name>`). */
  readonly name: string;
  /** The TLSRoute or TCPRoute this came from. */
  readonly source: SourceRef;
  /**
   * SNI names served: the intersections of the route's and the listener's hostnames (lower-case).
   * `Exact` names compare equal; `WildcardAnyLabels` `*.foo.com` takes `a.foo.com` and `a.b.foo.com`;
   * `Any` (hostname `*`) takes every name, also a ClientHello without SNI.
   */
  readonly hostnames: readonly {
    /** `foo.com`, `*.foo.com`, or `*` with `Any`. */
    readonly hostname: string;
    /** How `hostname` is compared with the SNI name. */
    readonly match: "Exact" | "WildcardAnyLabels" | "Any";
  }[];
  /** Candidates, one picked per connection by weight (smooth weighted round-robin). */
  readonly backends: readonly SNIBackend[];
}

/** A backend a passthrough connection may be sent to. */
export interface SNIBackend {
  /** Key into `GatewayModel.backends`, or (when `refused`) only a name for logs. */
  readonly backendId: string;
  /** Relative weight, >= 0; weight 0 is never picked. */
  readonly weight: number;
  /**
   * Set for a reference translation refused (kind, ReferenceGrant, Service or port missing): a
   * connection that picks this entry by weight is closed, as the Gateway API asks for invalid
   * backendRefs, instead of its share going to the valid ones.
   */
  readonly refused?: true;
}
