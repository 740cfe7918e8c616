/**
 * A request body read whole before it is forwarded (nginx's `proxy_request_buffering`; the raw front does
 * the same in raw-front/connection.ts): the client may stay silent at most `gapMs` between two chunks
 * (nginx's `client_body_timeout`), since Bun.serve's idle timeout does not run while a handler waits for
 * the body (measured: a silent sender was still connected after 12 s with a 1 s idle timeout).
 */

/** The body, or "timeout" when the client went silent for `gapMs`; "aborted" when it went away. */
export async function readBodyWithin(
  req: Request,
  gapMs: number,
): Promise<Uint8Array | "timeout" | "aborted"> {
  const body = req.body;
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let timer: Timer | undefined;
    const silent = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), gapMs);
    });
    try {
      const r = await Promise.race([reader.read(), silent]);
      if (r === "timeout") {
        reader.cancel("client body timeout").catch(() => {});
        return "timeout";
      }
      if (r.done) break;
      parts.push(r.value);
      size += r.value.length;
    } catch {
      return "aborted";
    } finally {
      clearTimeout(timer);
    }
  }
  return parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts, size);
}
