/**
 * The benchmark's upstream: a minimal Bun server answering a tiny fixed body, run as its own process so
 * that it does not share an event loop with the proxy under test. Usage: bun bench/backend.ts PORT
 * [CERT KEY] (with a certificate and key: in TLS, for the upstream-tls section).
 */
import { readFileSync } from "node:fs";

const port = Number(process.argv[2] ?? 0);
const [certFile, keyFile] = [process.argv[3], process.argv[4]];
const server = Bun.serve({
  port,
  hostname: "127.0.0.1",
  reusePort: false,
  ...(certFile && keyFile
    ? { tls: { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") } }
    : {}),
  fetch: () => new Response("ok\n", { headers: { "content-type": "text/plain" } }),
});
process.stdout.write(`${server.port}\n`);
