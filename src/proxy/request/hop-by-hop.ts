/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1), removed in both directions:
 * the fixed list plus every header the Connection header names.
 */
import { HOP_BY_HOP, isToken } from "../../model/http-syntax.ts";

export { HOP_BY_HOP };

export function stripHopByHop(h: Headers): void {
  const connection = h.get("connection");
  if (connection !== null) {
    for (const token of connection.split(",")) {
      const name = token.trim().toLowerCase();
      // Content-Length is framing, not a hop's option: a peer naming it must not make a HEAD answer
      // lose the length (the raw front keeps it too, head-to-client.ts).
      // A token that is not a field name (a client may send any bytes) names no field to drop; Headers
      // would throw on it.
      if (name !== "close" && name !== "keep-alive" && name !== "content-length" && isToken(name))
        h.delete(name);
    }
  }
  for (const name of HOP_BY_HOP) h.delete(name);
}
