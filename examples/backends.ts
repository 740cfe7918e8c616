/**
 * The demo backends the example EndpointSlices point at (services.yaml): two replicas of `web` and one
 * `api`, on fixed loopback ports. Each answers any request with JSON saying which service and replica
 * answered and what request it saw, so you can watch routing and round-robin with curl.
 * Run them alone with `bun examples/backends.ts`.
 */
import type { Server } from "bun";

export interface DemoBackend {
  readonly service: string;
  readonly pod: string;
  readonly port: number;
}

/** The ports in services.yaml; change both together. */
export const demoBackends: readonly DemoBackend[] = [
  { service: "web", pod: "web-1", port: 18081 },
  { service: "web", pod: "web-2", port: 18083 },
  { service: "api", pod: "api-1", port: 18082 },
];

/**
 * Start the demo backends on 127.0.0.1. `port: 0` entries get a free port (tests); `ports` in the result
 * lists the ports actually bound, in the order given. Throws with a clear message if a port is taken.
 */
export function startDemoBackends(backends: readonly DemoBackend[] = demoBackends): {
  readonly ports: readonly number[];
  stop(): void;
} {
  const servers: Server<undefined>[] = [];
  const stop = () => {
    for (const s of servers) s.stop(true);
  };
  for (const b of backends) {
    try {
      servers.push(Bun.serve({ hostname: "127.0.0.1", port: b.port, fetch: (req) => answer(req, b) }));
    } catch (err) {
      stop();
      throw new Error(
        `demo backend ${b.pod} cannot listen on 127.0.0.1:${b.port}: ${(err as Error).message}`,
      );
    }
  }
  return { ports: servers.map((s) => s.port as number), stop };
}

function answer(req: Request, backend: DemoBackend): Response {
  const url = req.url;
  const body = {
    service: backend.service,
    pod: backend.pod,
    method: req.method,
    // The path as the backend received it (after any rewrite the gateway did), query included.
    path: url.slice(url.indexOf("/", url.indexOf("//") + 2)),
    host: req.headers.get("host"),
    headers: Object.fromEntries(req.headers),
  };
  return new Response(`${JSON.stringify(body, null, 2)}\n`, {
    headers: { "content-type": "application/json" },
  });
}

if (import.meta.main) {
  startDemoBackends();
  for (const b of demoBackends)
    process.stdout.write(`${b.pod} (${b.service}) on http://127.0.0.1:${b.port}\n`);
}
