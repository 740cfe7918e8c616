/**
 * A response body passed through a pull stream of ours so that the end of a count (a request in flight,
 * a connection held) is seen when the body is read to its end, fails or is cancelled (held-forward.ts,
 * forward.ts). Bun.serve sends a stream of ours chunked (measured, Bun 1.4).
 */

/** `body` as it comes, `end` called once when it is done, fails or is cancelled. */
export function endingStream(body: ReadableStream<Uint8Array>, end: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const read = await reader.read();
          if (read.done) {
            end();
            controller.close();
          } else controller.enqueue(read.value);
        } catch (err) {
          end();
          controller.error(err);
        }
      },
      cancel(reason) {
        end();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
