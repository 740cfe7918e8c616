/**
 * gRPC section: unary calls over h2c through a GRPCRoute (Gateway HTTP listener, h2c with prior
 * knowledge; `appProtocol: kubernetes.io/h2c` to the backend) beside nginx's `grpc_pass` (built into
 * Debian's nginx) with upstream keep-alive, and the backend direct (the ceiling). The backend is
 * bench/grpc-backend.mjs (under Node); the load is h2load (bench/h2load.ts): POSTs of one empty gRPC message,
 * `content-type: application/grpc`, `te: trailers`, over few connections with several calls open on each,
 * as gRPC clients multiplex. h2load checks HTTP statuses only, so before timing one call through each
 * target must end with `grpc-status: 0` from the backend's trailers.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { connect } from "node:http2";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { runH2load } from "./h2load.ts";
import { measuredRun, type Run, repo, type Target, targetPids } from "./procs.ts";
import { wrkTable } from "./proxy.ts";
import { nginxPreamble } from "./routes.ts";
import { classesAndGateway, localService, readyIngress } from "./workload.ts";

const CALL = "/bench.Echo/Call";
const GRPC_HEADERS = { "content-type": "application/grpc", te: "trailers" };
/** Calls open at once on each connection; connections = BENCH_CONNECTIONS / this. */
const STREAMS = 4;

export async function grpcSection(ctx: BenchContext): Promise<string> {
  const { settings, procs } = ctx;
  const dir = join(ctx.work, "grpc");
  await mkdir(dir, { recursive: true });
  const body = join(dir, "call.bin");
  await writeFile(body, new Uint8Array(5)); // one empty message: not compressed, length 0
  const connections = Math.max(1, Math.round(settings.connections / STREAMS));
  const out = [
    `GRPCRoute (h2c) vs nginx grpc_pass; h2load -c${connections} -m${STREAMS} -D${settings.seconds}, unary calls; ${settings.rounds} round(s)`,
  ];
  const backendPort = await freePort();
  procs.spawn(["node", join(repo, "bench/grpc-backend.mjs"), String(backendPort)]);
  const direct: Target = {
    name: "direct",
    url: `http://127.0.0.1:${backendPort}`,
    // No CPU counted for the ceiling, as in the other sections (the backend stops with the run).
    proc: undefined,
    stop: async () => {},
  };
  await grpcReady(direct.url);
  for (const n of settings.workerCounts) {
    const httpPort = await freePort();
    const grpcPort = await freePort();
    const gwDir = join(dir, `gatehouse-${n}`);
    await mkdir(gwDir, { recursive: true });
    await writeFile(
      join(gwDir, "grpc.yaml"),
      grpcManifests(ctx.backendPort, backendPort, httpPort, grpcPort),
    );
    const nginxPort = await freePort();
    const readyPort = await freePort();
    const prefix = join(dir, `nginx-${n}`);
    const nginxReady = await procs.nginx({
      prefix,
      conf: nginxGrpcConf({ port: nginxPort, readyPort, upstreamPort: backendPort, workers: n, prefix }),
      port: readyPort,
      host: "ready.bench",
    });
    const nginx: Target = { ...nginxReady, name: "nginx grpc", url: `http://127.0.0.1:${nginxPort}` };
    const gateway = await procs.gatehouse({
      dir: gwDir,
      port: httpPort,
      workers: n,
      ready: { probe: "/ready", host: "ready.bench" },
    });
    const grpc: Target = { ...gateway, name: "gatehouse", url: `http://127.0.0.1:${grpcPort}` };
    try {
      await grpcReady(nginx.url);
      await grpcReady(grpc.url);
      const targets = [direct, nginx, grpc];
      const samples = new Map<string, Run[]>(targets.map((t) => [t.name, []]));
      for (let r = 0; r < settings.rounds; r++) {
        // Alternate the order each round so slow drift on the machine does not favour one side.
        const order = r % 2 === 0 ? targets : [...targets].reverse();
        for (const t of order) {
          const load = () =>
            runH2load({
              url: t.url + CALL,
              seconds: settings.seconds,
              connections,
              streams: STREAMS,
              body,
              headers: GRPC_HEADERS,
              logFile: join(dir, "requests.log"),
            });
          samples.get(t.name)?.push(await measuredRun(t.name, await targetPids(t), load));
        }
      }
      out.push("", `N=${n} worker(s)`, wrkTable(samples, "nginx grpc"));
    } finally {
      await nginx.stop();
      await gateway.stop();
    }
  }
  return out.join("\n");
}

/**
 * Until one call through `base` ends with `grpc-status: 0` (30 s at most): the target serves and relays
 * the backend's trailers. Throws with the last status seen otherwise.
 */
async function grpcReady(base: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = "no answer";
  while (Date.now() < deadline) {
    last = await grpcStatusOf(base).catch((err: Error) => err.message);
    if (last === "0") return;
    await Bun.sleep(100);
  }
  throw new Error(`${base}${CALL}: no successful gRPC call (last: ${last})`);
}

function grpcStatusOf(base: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const session = connect(base);
    session.on("error", reject);
    const st = session.request({ ":method": "POST", ":path": CALL, ...GRPC_HEADERS });
    let status = "no grpc-status";
    const take = (fields: Record<string, unknown>) => {
      if (fields["grpc-status"] !== undefined) status = String(fields["grpc-status"]);
    };
    st.on("response", take);
    st.on("trailers", take);
    st.on("error", reject);
    st.on("close", () => {
      session.close();
      resolve(status);
    });
    st.resume();
    st.end(new Uint8Array(5));
  });
}

/** Classes, a Gateway with the HTTP listener the GRPCRoute takes, the h2c Service; an Ingress to probe. */
function grpcManifests(httpBackend: number, grpcBackend: number, httpPort: number, grpcPort: number): string {
  const [ingressClass, gatewayClass, gateway] = classesAndGateway("bench", "grpc", httpPort);
  const docs: unknown[] = [
    ingressClass,
    gatewayClass,
    {
      ...gateway,
      spec: {
        gatewayClassName: "gatehouse",
        listeners: [{ name: "grpc", port: grpcPort, protocol: "HTTP" }],
      },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GRPCRoute",
      metadata: { name: "grpc", namespace: "bench" },
      spec: { parentRefs: [{ name: "grpc" }], rules: [{ backendRefs: [{ name: "grpc", port: 80 }] }] },
    },
    ...localService("bench", "grpc", 80, grpcBackend, "kubernetes.io/h2c"),
    ...localService("bench", "backend", 80, httpBackend),
    readyIngress("bench", "ready.bench", "backend"),
  ];
  return docs.map((d) => stringify(d)).join("---\n");
}

/**
 * nginx's gRPC proxy with upstream keep-alive (one call per upstream connection at a time: nginx does not
 * multiplex upstream), no access log; a plain port answers the readiness probe.
 */
function nginxGrpcConf(opts: {
  port: number;
  readyPort: number;
  upstreamPort: number;
  workers: number;
  prefix: string;
}): string {
  return `${nginxPreamble(opts.workers, opts.prefix)}  # Its default of 1000 requests a connection ends each h2load connection (GOAWAY) after 1000 calls, and
  # h2load does not reconnect: the rows would measure nothing after that. Gatehouse sets no such limit.
  keepalive_requests 1000000;
  upstream grpc_backend {
    server 127.0.0.1:${opts.upstreamPort};
    keepalive 128;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${opts.port} http2 reuseport;
    location / { grpc_pass grpc://grpc_backend; }
  }
  server {
    listen 127.0.0.1:${opts.readyPort};
    location / { return 200 "ok\\n"; }
  }
}
`;
}
