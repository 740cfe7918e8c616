/**
 * TLS listeners in mode Terminate (TLSRoute): the connection, its ClientHello already read for the
 * route, is handed (handoff.ts) to a node:tls server socket that completes the handshake with the
 * listener's certificates (SNI picks one; h2/sni.ts), and the decrypted bytes are piped to the route's
 * endpoint over plain TCP and back, with the streams' backpressure and each side's end passed on. The
 * backend never sees TLS. A failed handshake, an unreachable endpoint or a silence past the idle timeout
 * closes both sides.
 */
import { connect } from "node:net";
import { TLSSocket } from "node:tls";
import { limitedLog } from "../../observability/log-limit.ts";
import { contextFor, type SniTable } from "../h2/sni.ts";
import type { TerminationHandoff } from "./handoff.ts";
import type { StreamStats } from "./pipe.ts";

export interface TerminateTarget {
  readonly listener: string;
  readonly route: string;
  readonly address: string;
  readonly port: number;
}

export function terminatingHandoff(
  certificates: SniTable,
  target: TerminateTarget,
  stats: StreamStats,
  idleTimeoutMs: number,
): TerminationHandoff {
  return (stream) => {
    const tls = new TLSSocket(stream, {
      isServer: true,
      // The contexts carry the protocol and cipher policy of the HTTPS listeners (h2/sni.ts).
      secureContext: certificates.fallback,
      SNICallback: (name, done) => done(null, contextFor(certificates, name)),
    });
    const upstream = connect({ host: target.address, port: target.port });
    let connected = false;
    const close = () => {
      tls.destroy();
      upstream.destroy();
    };
    upstream.on("connect", () => {
      connected = true;
    });
    upstream.on("error", (err) => {
      if (!connected) {
        stats.upstreamFailed++;
        limitedLog("warn", target.listener, "TLS Terminate backend unreachable", {
          listener: target.listener,
          route: target.route,
          endpoint: `${target.address}:${target.port}`,
          error: err.message,
        });
      }
      close();
    });
    tls.on("error", close);
    tls.on("data", (d: Buffer) => {
      stats.bytesToUpstream += d.length;
    });
    upstream.on("data", (d: Buffer) => {
      stats.bytesToClient += d.length;
    });
    if (idleTimeoutMs > 0) {
      tls.setTimeout(idleTimeoutMs, () => {
        stats.idleClosed++;
        close();
      });
    }
    tls.on("close", () => upstream.destroy());
    upstream.on("close", () => tls.end());
    tls.pipe(upstream);
    upstream.pipe(tls);
  };
}
