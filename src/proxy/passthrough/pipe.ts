/**
 * One proxied connection of a passthrough or TCP listener (listener.ts): the client, its upstream once
 * routed, what each side sent that the other has not taken yet, and the relay between them with
 * backpressure (a short write queues the rest and pauses the other side until `drain`) and half-close.
 */
import type { Socket } from "bun";
import type { ProxyPreamble } from "../client/proxy-preamble.ts";
import type { HandedClient } from "./handoff.ts";

/** One client connection and, once routed, its upstream. */
export interface Pipe {
  /** `handed`: given to the HTTPS listener sharing the port (`handed` is its stream). */
  phase: "hello" | "connecting" | "piping" | "handed" | "closed";
  /** `--proxy-protocol`: set until the connection's PROXY header is read. */
  preamble?: ProxyPreamble;
  /** The client: the socket's address, or the source its PROXY header named. */
  peer: string;
  handed?: HandedClient;
  hello: Uint8Array[];
  helloBytes: number;
  timer?: ReturnType<typeof setTimeout>;
  client: Socket<Pipe>;
  upstream?: Socket<Pipe>;
  /** Bytes read from one side that the other has not taken yet. */
  toUpstream: Uint8Array[];
  toClient: Uint8Array[];
  /** The side that ended first; the other is ended once its queue is written. */
  endUpstream: boolean;
  endClient: boolean;
  /** `Date.now()` when either side last sent a byte (the idle timeout's clock). */
  lastActive: number;
  /** The listener's counters (shared by its pipes). */
  stats: StreamStats;
}

/**
 * What one listener (socket) has carried since the process started, read at scrape time: connections by
 * how they ended up, bytes each way. Plain numbers: the relay adds to them per chunk, never per byte.
 */
export interface StreamStats {
  /** Connections routed to an upstream. */
  routed: number;
  /** Closed before reaching an upstream: no route, an invalid backendRef's share, no endpoint, bad hello. */
  refused: number;
  /** The chosen endpoint could not be connected to. */
  upstreamFailed: number;
  /** Closed after the idle timeout with no byte either way. */
  idleClosed: number;
  /** UDP flows closed to make room for a new one (the flow cap). */
  evicted: number;
  /** Bytes from clients to upstreams, and back. */
  bytesToUpstream: number;
  bytesToClient: number;
}

export function newStreamStats(): StreamStats {
  return {
    routed: 0,
    refused: 0,
    upstreamFailed: 0,
    idleClosed: 0,
    evicted: 0,
    bytesToUpstream: 0,
    bytesToClient: 0,
  };
}

/** Write `chunk` to `to`, or queue it behind what is already waiting and pause the other side. */
export function relay(pipe: Pipe, chunk: Uint8Array, to: "client" | "upstream"): void {
  pipe.lastActive = Date.now();
  if (to === "client") pipe.stats.bytesToClient += chunk.length;
  else pipe.stats.bytesToUpstream += chunk.length;
  const queue = to === "client" ? pipe.toClient : pipe.toUpstream;
  queue.push(chunk);
  flush(pipe, to);
  // Not everything written (or the upstream is still connecting): copy what stays, stop reading.
  if (queue.length > 0) {
    const last = queue.length - 1;
    queue[last] = (queue[last] as Uint8Array).slice();
    (to === "client" ? pipe.upstream : pipe.client)?.pause();
  }
}

/** Write what is queued for `to`; when all of it went, resume the other side (and end if asked). */
export function flush(pipe: Pipe, to: "client" | "upstream"): void {
  const socket = to === "client" ? pipe.client : pipe.upstream;
  if (socket === undefined || pipe.phase === "closed") return;
  const queue = to === "client" ? pipe.toClient : pipe.toUpstream;
  while (queue.length > 0) {
    const head = queue[0] as Uint8Array;
    const n = socket.write(head);
    if (n < head.length) {
      queue[0] = head.subarray(Math.max(0, n));
      return;
    }
    queue.shift();
  }
  (to === "client" ? pipe.upstream : pipe.client)?.resume();
  // A FIN passed on, the other direction still open: Bun's `end()` would close the socket whole (measured:
  // a Bun.connect socket's `close` fires at once and the answer is lost); `shutdown()` sends only the FIN.
  if (to === "client" ? pipe.endClient : pipe.endUpstream) socket.shutdown();
}

export function concat(parts: readonly Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
