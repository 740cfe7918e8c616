/**
 * The benchmark's upstream: a minimal Bun server answering a tiny fixed body, run as its own process so
 * that it does not share an event loop with the proxy under test. Usage: bun bench/backend.ts PORT
 */
const port = Number(process.argv[2] ?? 0);
const server = Bun.serve({
  port,
  hostname: "127.0.0.1",
  reusePort: false,
  fetch: () => new Response("ok\n", { headers: { "content-type": "text/plain" } }),
});
process.stdout.write(`${server.port}\n`);
