/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1), removed in both directions:
 * the fixed list plus every header the Connection header names.
 */
export const HOP_BY_HOP: readonly string[] = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

export function stripHopByHop(h: Headers): void {
  const connection = h.get("connection");
  if (connection !== null) {
    for (const token of connection.split(",")) {
      const name = token.trim().toLowerCase();
      if (name !== "" && name !== "close" && name !== "keep-alive") h.delete(name);
    }
  }
  for (const name of HOP_BY_HOP) h.delete(name);
}
