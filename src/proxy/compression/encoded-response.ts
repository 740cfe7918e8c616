/**
 * Compression on the full request path (`--front bun`, HTTP/2, and what the raw front relays there): an
 * upstream Response whose body is compressed read by read (encoder.ts), pulled only when Bun.serve asks
 * for more (no queue of its own), so a slow client holds the upstream back rather than the body piling up
 * here. Without a Content-Length Bun.serve sends it chunked. Rules: response-rules.ts.
 */
import { limitedLog } from "../../observability/log-limit.ts";
import { ResponseEncoder } from "./encoder.ts";
import {
  type CompiledCompression,
  compressibleResponse,
  editEncodedFields,
  requestedCoding,
} from "./response-rules.ts";

/** `res` (an upstream response, hop fields already dropped) compressed when `compression` says so. */
export function encodedResponse(
  req: Request,
  res: Response,
  compression: CompiledCompression | undefined,
): Response {
  if (compression === undefined || res.body === null) return res;
  const h = res.headers;
  const length = h.get("content-length");
  if (
    length === "0" ||
    !compressibleResponse(compression, res.status, length === null ? -1 : Number(length), h)
  )
    return res;
  const coding = requestedCoding(
    compression,
    req.method,
    req.headers.get("accept-encoding"),
    req.headers.has("range"),
  );
  editEncodedFields(h, coding);
  if (coding === undefined) return res;
  return new Response(encodedStream(res.body, new ResponseEncoder(coding, compression)), {
    status: res.status,
    statusText: res.statusText,
    headers: h,
  });
}

function encodedStream(
  body: ReadableStream<Uint8Array>,
  encoder: ResponseEncoder,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          for (;;) {
            const read = await reader.read();
            if (!read.done) encoder.push(read.value);
            const out = encoder.take(read.done, false);
            if (encoder.failed) throw new Error(`${encoder.coding} encoder failed`);
            if (out !== undefined) controller.enqueue(out);
            if (read.done) {
              controller.close();
              return;
            }
            if (out !== undefined) return;
          }
        } catch (err) {
          encoder.release();
          if (encoder.failed)
            limitedLog("error", "compression", "response compression failed", { error: String(err) });
          controller.error(err);
        }
      },
      cancel(reason) {
        encoder.release();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
