/**
 * The gRPC section's upstream, run with Node (`node bench/grpc-backend.mjs PORT`; prints the port once
 * listening): any unary call over h2c answered as a gRPC server does (head, one empty message,
 * `grpc-status: 0` in trailers) with node:http2's stream API, not @grpc/grpc-js, which decodes and encodes
 * messages. Node, not Bun: Bun 1.4.5's node:http2 server ignores a peer's SETTINGS_HEADER_TABLE_SIZE of
 * 0, which nginx's grpc module sends (its HPACK decoder has no dynamic table), so nginx failed every call
 * after the first on a connection ("upstream sent invalid http2 table index: 64"). Node's nghttp2 honours
 * it, as gRPC servers do. Plain JavaScript, so that Node runs it as it is.
 */
import { createServer } from "node:http2";

const EMPTY_MESSAGE = Buffer.from([0, 0, 0, 0, 0]);
const server = createServer();
server.on("stream", (stream) => {
  stream.on("error", () => {});
  stream.resume();
  stream.on("end", () => {
    // A load tool stopping at its deadline resets the calls it has open.
    if (stream.destroyed) return;
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(EMPTY_MESSAGE);
  });
});
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${typeof address === "object" && address ? address.port : 0}\n`);
});
