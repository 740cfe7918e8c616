/**
 * The full request path's pacing of a response body (`--front bun`, HTTP/2, and what the raw front
 * relays): the upstream body is read only when Bun.serve asks for more (a pull stream with no queue of
 * its own), and each read is passed on in the slices pace-clock.ts allows, a timer waiting between them.
 * So at most one upstream read is held, and an unpaced route never comes here (handler.ts checks the
 * route's field).
 *
 * Framing, decided here rather than left to Bun: a paced body goes out chunked (HTTP/1.1), its
 * upstream's Content-Length dropped, on every response with a body byte. Bun.serve (1.4, measured)
 * strips a handler's Content-Length from any stream body of ours and chunks it, except that a body
 * still in its write buffer when the stream ends (a few hundred bytes at most) goes with a
 * Content-Length it counted: so the end is signalled one macrotask after the last bytes, when Bun has
 * begun the chunked body. An empty body goes with `Content-Length: 0`. The raw front keeps the
 * upstream's framing: a written exception (docs/http.md).
 */
import type { ResponseBandwidth } from "../../model/index.ts";
import { PaceClock } from "./pace-clock.ts";

/** `body` passed on no faster than `bandwidth` allows. */
export function pacedStream(
  body: ReadableStream<Uint8Array>,
  bandwidth: ResponseBandwidth,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let clock: PaceClock | undefined;
  let rest: Uint8Array | undefined;
  let cancelled = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // The clock starts with the first pull: when the head has gone and the body is wanted.
        clock ??= new PaceClock(bandwidth);
        if (rest === undefined || rest.length === 0) {
          const read = await reader.read();
          if (read.done) {
            if (clock.sent > 0) await new Promise((r) => setImmediate(r));
            if (!cancelled) controller.close();
            return;
          }
          rest = read.value;
        }
        let n = clock.allowance(performance.now());
        while (n <= 0) {
          await Bun.sleep(clock.nextSliceMs(rest.length, performance.now()));
          if (cancelled) return;
          n = clock.allowance(performance.now());
        }
        const out = n >= rest.length ? rest : rest.subarray(0, n);
        rest = n >= rest.length ? undefined : rest.subarray(n);
        clock.sent += out.length;
        controller.enqueue(out);
      },
      cancel(reason) {
        cancelled = true;
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * `res` with its body paced (a new Response around the same status and headers, less Content-Length:
 * the body goes chunked, see above); bodiless ones as they are.
 */
export function pacedResponse(res: Response, bandwidth: ResponseBandwidth): Response {
  const body = res.body;
  if (body === null) return res;
  const out = new Response(pacedStream(body, bandwidth), {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
  out.headers.delete("content-length");
  return out;
}
