/**
 * The demo backends the example EndpointSlices point at (services.yaml): two replicas of `web` and one
 * `api`, on fixed loopback ports. Each answers any request with the JSON of the upstream conformance
 * echo server (path with query, host, method, proto, headers, namespace, ingress, service, pod; see
 * test/helpers/echo-server.ts), so what you see with curl reads like the conformance suite's backends,
 * and `service`/`pod` show routing and round-robin.
 * Run them alone with `bun examples/backends.ts`.
 */
import type { Server } from "bun";

export interface DemoBackend {
  /** The Service this replica belongs to (echoed as `service`). */
  readonly service: string;
  /** The replica's name (echoed as `pod`). */
  readonly pod: string;
  /** Loopback port to listen on; 0 picks a free one. */
  readonly port: number;
}

/**
 * The ports in services.yaml; change both together. Fixed, because the EndpointSlices in this folder
 * are plain YAML a user reads and edits while the gateway watches it: picking free ports at start would
 * mean rewriting tracked files on every run. 24081-24083 sit below the kernel's ephemeral range
 * (32768-60999), so no free port taken by a test, benchmark or outgoing connection lands on them, and
 * away from the usual development ports (3000, 5000, 8000, 8080, 9090, 18080-18081).
 */
export const demoBackends: readonly DemoBackend[] = [
  { service: "web", pod: "web-1", port: 24081 },
  { service: "web", pod: "web-2", port: 24083 },
  { service: "api", pod: "api-1", port: 24082 },
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

/**
 * The upstream echo server's body: `json.MarshalIndent` with a one-space indent, headers as Go's
 * canonical-name map of arrays without Host. `ingress` stays empty: a replica serves every Ingress that
 * routes to its Service (upstream reads it from the pod's environment), and it cannot know which one did.
 */
function answer(req: Request, backend: DemoBackend): Response {
  const url = req.url;
  const body = {
    // The target as the backend received it (after any rewrite the gateway did), query included.
    path: url.slice(url.indexOf("/", url.indexOf("//") + 2)),
    host: req.headers.get("host") ?? "",
    method: req.method,
    proto: "HTTP/1.1",
    headers: goHeaders(req.headers),
    namespace: "default",
    ingress: "",
    service: backend.service,
    pod: backend.pod,
  };
  return new Response(`${JSON.stringify(body, null, 1)}\n`, {
    headers: { "content-type": "application/json", "x-content-type-options": "nosniff" },
  });
}

/** `X-Forwarded-For: [..]`, names sorted, Host left out, as Go's `http.Header` marshals. */
function goHeaders(headers: Headers): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of [...headers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (name === "host") continue;
    const canonical = name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
    out[canonical] = [...(out[canonical] ?? []), value];
  }
  return out;
}

if (import.meta.main) {
  startDemoBackends();
  for (const b of demoBackends)
    process.stdout.write(`${b.pod} (${b.service}) on http://127.0.0.1:${b.port}\n`);
}
