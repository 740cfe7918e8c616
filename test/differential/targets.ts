/**
 * The three targets of the differential run, each with its own pair of recording backends ("public" and
 * "admin") so the three can be probed at once: Gatehouse's raw front and Bun.serve front in this process
 * (GatewayServer, as the integration tests run them), and a real nginx as a reverse proxy with the same
 * routes, configured as ingress-nginx configures one:
 *
 *   host app.example   /public (prefix, by path segment) → public; /admin (exact) → admin;
 *                      anything else → 404 `dest=app-404`
 *   any other host     200 `dest=catch-all`
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DirectResponseAction } from "../../src/model/index.ts";
import { setLogSink } from "../../src/observability/logger.ts";
import { GatewayServer } from "../../src/proxy/listeners/server.ts";
import { backend, forwardTo, listener, match, model, route, vhost } from "../../src/proxy/testing/model.ts";
import { freePort } from "../helpers/ports.ts";
import { Recorder, type RecordingBackend, startRecordingBackend } from "./backend.ts";

export type TargetName = "raw" | "bun" | "nginx";
export const TARGETS: readonly TargetName[] = ["raw", "bun", "nginx"];

export interface Target {
  readonly name: TargetName;
  readonly port: number;
  readonly recorder: Recorder;
}

export interface Targets {
  readonly list: readonly Target[];
  /** Stops everything started, whatever state it is in; safe to call twice. */
  stop(): Promise<void>;
}

/** `nginx` on PATH, or null: the differential run needs it, the rest of the suite does not. */
export function nginxBinary(): string | null {
  return Bun.which("nginx");
}

/** Starts the three targets; on any failure stops what it had started and throws. */
export async function startTargets(): Promise<Targets> {
  const stops: (() => Promise<void> | void)[] = [];
  const restoreSink = setLogSink(() => {});
  stops.push(() => {
    setLogSink(restoreSink);
  });
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s();
  };
  try {
    const list: Target[] = [];
    for (const front of ["raw", "bun"] as const) {
      const { recorder, backends } = backendsFor(stops);
      const gw = new GatewayServer({ bind: "127.0.0.1", front, defaultUpstreamTimeoutMs: 3000 });
      stops.push(() => gw.stop(true));
      await gw.apply(gatehouseModel(backends));
      list.push({ name: front, port: gw.ports()[0]?.port ?? 0, recorder });
    }
    const { recorder, backends } = backendsFor(stops);
    const port = await startNginx(backends, stops);
    list.push({ name: "nginx", port, recorder });
    return { list, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function backendsFor(stops: (() => Promise<void> | void)[]): {
  recorder: Recorder;
  backends: { public: RecordingBackend; admin: RecordingBackend };
} {
  const recorder = new Recorder();
  const pub = startRecordingBackend("public", recorder);
  stops.push(() => pub.stop());
  const admin = startRecordingBackend("admin", recorder);
  stops.push(() => admin.stop());
  return { recorder, backends: { public: pub, admin } };
}

const direct = (status: number, dest: string): DirectResponseAction => ({
  kind: "DirectResponse",
  status,
  body: `dest=${dest}`,
});

function gatehouseModel(b: { public: RecordingBackend; admin: RecordingBackend }) {
  return model(
    [
      listener([
        vhost("app.example", [
          route("public", match("/public"), forwardTo("public")),
          route("admin", match("/admin", "Exact"), forwardTo("admin")),
          route("app-404", match("/"), direct(404, "app-404")),
        ]),
        vhost("*", [route("catch-all", match("/"), direct(200, "catch-all"))]),
      ]),
    ],
    [backend("public", [b.public.port]), backend("admin", [b.admin.port])],
  );
}

/**
 * The nginx.conf. `location = /public` plus `location /public/` is a Gateway API path prefix (by segment:
 * `/publicity` is not under it). The proxy directives are ingress-nginx's (rootfs/etc/nginx/template):
 * `proxy_pass` without a URI (the target goes upstream as the client sent it), the Host as received, and
 * Upgrade passed on. Upstream keep-alive, as Gatehouse pools its upstream connections.
 */
export function nginxConf(opts: { port: number; publicPort: number; adminPort: number; prefix: string }) {
  return `worker_processes 1;
pid ${opts.prefix}/nginx.pid;
error_log ${opts.prefix}/error.log info;
events { worker_connections 256; }
http {
  access_log off;
  default_type text/plain;
  client_body_temp_path ${opts.prefix}/body;
  proxy_temp_path ${opts.prefix}/proxy;
  fastcgi_temp_path ${opts.prefix}/fastcgi;
  uwsgi_temp_path ${opts.prefix}/uwsgi;
  scgi_temp_path ${opts.prefix}/scgi;
  map $http_upgrade $connection_upgrade { default upgrade; '' ''; }
  proxy_http_version 1.1;
  proxy_set_header Host $http_host;
  proxy_set_header Upgrade $http_upgrade;
  proxy_set_header Connection $connection_upgrade;
  proxy_set_header X-Forwarded-For $remote_addr;
  proxy_read_timeout 3s;
  upstream public { server 127.0.0.1:${opts.publicPort}; keepalive 8; }
  upstream admin { server 127.0.0.1:${opts.adminPort}; keepalive 8; }
  server {
    listen 127.0.0.1:${opts.port} default_server;
    location / { return 200 "dest=catch-all"; }
  }
  server {
    listen 127.0.0.1:${opts.port};
    server_name app.example;
    location = /public { proxy_pass http://public; }
    location /public/ { proxy_pass http://public; }
    location = /admin { proxy_pass http://admin; }
    location / { return 404 "dest=app-404"; }
  }
}
`;
}

async function startNginx(
  b: { public: RecordingBackend; admin: RecordingBackend },
  stops: (() => Promise<void> | void)[],
): Promise<number> {
  const bin = nginxBinary();
  if (bin === null) throw new Error("nginx is not on PATH");
  const prefix = await mkdtemp(join(tmpdir(), "gatehouse-differential-"));
  stops.push(() => rm(prefix, { recursive: true, force: true }));
  const port = await freePort();
  const conf = join(prefix, "nginx.conf");
  await writeFile(conf, nginxConf({ port, publicPort: b.public.port, adminPort: b.admin.port, prefix }));
  // -e: nginx opens its compiled-in error log before it reads the configuration.
  const proc = Bun.spawn(
    [bin, "-p", prefix, "-e", join(prefix, "error.log"), "-c", conf, "-g", "daemon off;"],
    {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    },
  );
  // A run that dies between here and stop() must not leave nginx serving.
  const kill = () => proc.kill("SIGKILL");
  process.once("exit", kill);
  stops.push(async () => {
    process.off("exit", kill);
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    await proc.exited;
  });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null)
      throw new Error(`nginx exited with ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
    const up = await fetch(`http://127.0.0.1:${port}/`).then(
      (r) => r.text(),
      () => "",
    );
    if (up === "dest=catch-all") return port;
    await Bun.sleep(30);
  }
  throw new Error(`nginx did not answer on port ${port}`);
}
