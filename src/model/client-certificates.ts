/**
 * Client certificates asked for per host (ingress-nginx `auth-tls-*`, a server-level setting there): the
 * HTTPS listener's SNI entry for the host carries the CA bundle (`TLSCertificate.clientCAPem`), and each
 * route of the host checks, per request, what the handshake of its connection settled.
 */

/**
 * What a route demands of the client's certificate (ingress-nginx `auth-tls-verify-client` and its
 * siblings). A request whose Host is not the connection's SNI name is refused (421) unless `verify` is
 * `off`: the certificate was verified in the context of the SNI name, so it says nothing about another host.
 */
export interface RouteClientCertificate {
  /**
   * - `on`: a certificate the host's CAs verify is required (none: 400 "No required SSL certificate was
   *   sent"; a bad one: 400 "The SSL certificate error").
   * - `optional`: a certificate is asked for; none is allowed, a bad one is refused as with `on`.
   * - `optional_no_ca`: asked for, never refused; the upstream learns the verification result.
   * - `off`: none is asked for; the upstream headers say `NONE`.
   */
  readonly verify: "on" | "optional" | "optional_no_ca" | "off";
  /** Most certificates between the client's and a trusted CA's, plus one (ingress-nginx default 1). */
  readonly depth: number;
  /** Where a client refused for its certificate (the two 400s) is redirected (302) instead. */
  readonly errorPage?: string;
  /**
   * A pattern (linear-time engine, unanchored, as nginx's `~`) the certificate's subject DN (RFC 2253,
   * `CN=alice,O=Acme`) must match; otherwise 403. No certificate: no match.
   */
  readonly matchCN?: string;
  /** Pass the certificate upstream in `ssl-client-cert` (URL-encoded PEM), as ingress-nginx does. */
  readonly passCertificate: boolean;
  /** Set when the host's configuration cannot be served (a CA Secret missing or bad): every request 403. */
  readonly refused?: string;
}
