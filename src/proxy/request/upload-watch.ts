/**
 * nginx's `proxy_send_timeout` on the fetch path: a streamed request body is handed to fetch through a
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
