/**
 * Caps on client connections, shared by every listener of the raw front in a process: in total and per
 * peer address (`--max-connections`, `--max-connections-per-peer`; 0: no cap). A connection over a cap is
 * closed as it arrives, before a byte is read (for HTTPS, before the handshake), and counted by reason.
 * The peer is the socket's address: behind a load balancer every client shares the balancer's, so the
 * per-peer cap belongs where clients connect directly (trusted proxies, issue 24, will name the client).
 */
export type RefusalReason = "total" | "per_peer";

export class ConnectionAdmission {
  private open = 0;
  private readonly perPeer = new Map<string, number>();

  constructor(
    readonly maxTotal: number,
    readonly maxPerPeer: number,
    /** Told of each refused connection. */
    private readonly refused: (reason: RefusalReason) => void = () => {},
  ) {}

  /** Counts a new connection from `peer`; false (nothing counted) when a cap is reached. */
  admit(peer: string): boolean {
    if (this.maxTotal > 0 && this.open >= this.maxTotal) {
      this.refused("total");
      return false;
    }
    if (this.maxPerPeer > 0) {
      const n = this.perPeer.get(peer) ?? 0;
      if (n >= this.maxPerPeer) {
        this.refused("per_peer");
        return false;
      }
      this.perPeer.set(peer, n + 1);
    }
    this.open++;
    return true;
  }

  /** A connection `admit` counted has closed. */
  release(peer: string): void {
    this.open--;
    if (this.maxPerPeer === 0) return;
    const n = (this.perPeer.get(peer) ?? 1) - 1;
    if (n <= 0) this.perPeer.delete(peer);
    else this.perPeer.set(peer, n);
  }
}
