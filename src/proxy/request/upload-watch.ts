/**
 * Watches on a request body streamed on the fetch path: its size (nginx `client_max_body_size`, below) and
 * nginx's `proxy_send_timeout`: a streamed request body is handed to fetch through a
 * stream that fetch pulls from, one chunk at a time. Once a chunk is handed over, fetch has `ms` to ask
 * for the next one; when it does not (its socket to the upstream is full because the upstream stopped
 * reading), `onStall` runs (forward.ts aborts the fetch). The clock never runs while the client is the
 * slow side: it is stopped during a pull, which waits on the client.
 */
export function watchedUpload(
  body: ReadableStream<Uint8Array>,
  ms: number,
  onStall: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let timer: Timer | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(out) {
        clearTimeout(timer);
        const r = await reader.read();
        if (r.done) {
          out.close();
          return;
        }
        out.enqueue(r.value);
        timer = setTimeout(onStall, ms);
      },
      cancel(reason) {
        clearTimeout(timer);
        return reader.cancel(reason);
      },
    },
    // Nothing read ahead: a chunk is taken from the client only when fetch asks for one.
    { highWaterMark: 0 },
  );
}

/**
 * A route's request body limit (model `requestBodyMaxBytes`) on the fetch path: a declared Content-Length
 * past `max` (Bun.serve checks that the body matches it); repeated identical fields arrive joined (`5, 5`).
 */
export function declaredOver(headers: Headers, max: number): boolean {
  const cl = headers.get("content-length");
  if (cl === null) return false;
  const comma = cl.indexOf(",");
  return Number(comma < 0 ? cl : cl.slice(0, comma)) > max;
}

/**
 * A body without a Content-Length (chunked, HTTP/2) as fetch pulls it, cut at `max` bytes: the chunk that
 * would pass it is not handed over; `onOver` runs instead (forward.ts aborts the upstream request) and the
 * stream errors, so the upstream never gets more than `max`.
 */
export function cappedUpload(
  body: ReadableStream<Uint8Array>,
  max: number,
  onOver: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(out) {
        const r = await reader.read();
        if (r.done) {
          out.close();
          return;
        }
        seen += r.value.length;
        if (seen > max) {
          reader.cancel("request body too large").catch(() => {});
          out.error(new Error(`request body past ${max} bytes`));
          // Aborting fetch from inside its own pull may throw its AbortError here: it is fetch's to report.
          try {
            onOver();
          } catch {}
          return;
        }
        out.enqueue(r.value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
