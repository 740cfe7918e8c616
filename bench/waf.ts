/**
 * WAF section: what ModSecurity v3 (libmodsecurity3 through bun:ffi) with the OWASP CRS at paranoia level
 * 1 costs per request, on the raw front, in one gateway process (--workers 1): a route without a WAF, the
 * same request on a WAF route in Enforce mode (`waf clean`), and a request CRS blocks there (`waf blocked`,
 * SQLi in the query, answered 403 by the gateway). Then the stall the issue asks about: the route without
 * a WAF measured alone and while another wrk loads the WAF route (`open+waf`), and the WAF route's own
 * throughput meanwhile (`waf+open`): the engine's calls are synchronous, on its worker thread
 * (src/waf/engine-queue.ts), so they should not hold up the thread that serves every route.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { measuredRun, type Run, type Target, targetPids } from "./procs.ts";
import { wrkTable } from "./proxy.ts";
import { localService } from "./workload.ts";
import { runWrk, type WrkOptions } from "./wrk.ts";

const ns = "bench";
const hosts = { open: "open.waf.bench", waf: "waf.bench" } as const;
const attack = "/items?id=1%27%20OR%20%271%27%3D%271";
/** What a browser sends: CRS inspects every field, so a bare `Host` would flatter it. */
const browser = {
  "User-Agent":
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
  Accept: "text/html,application/xhtml+xml,*/*;q=0.8",
  "Accept-Language": "en-GB,en;q=0.9",
};

function ingress(name: string, host: string, annotations: Record<string, string>) {
  const backend = { service: { name: "backend", port: { number: 80 } } };
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: ns, annotations },
    spec: {
      ingressClassName: "gatehouse",
      rules: [{ host, http: { paths: [{ path: "/", pathType: "Prefix", backend }] } }],
    },
  };
}

function manifests(backendPort: number): string {
  const waf = {
    "nginx.ingress.kubernetes.io/enable-modsecurity": "true",
    "nginx.ingress.kubernetes.io/enable-owasp-core-rules": "true",
    "gatehouse.dev/waf-mode": "Enforce",
  };
  const docs = [
    {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "gatehouse" },
      spec: { controller: "gatehouse.dev/ingress-controller" },
    },
    ...localService(ns, "backend", 80, backendPort),
    ingress("open", hosts.open, {}),
    ingress("waf", hosts.waf, waf),
  ];
  return docs.map((d) => stringify(d)).join("---\n");
}

/** A run whose every answer is the WAF's 403: wrk counts those as non-2xx, which is the point here. */
async function blockedRun(opts: WrkOptions) {
  const res = await runWrk(opts);
  if (res.errors !== res.requests)
    throw new Error(`waf blocked: ${res.requests - res.errors} requests were not refused`);
  return { ...res, errors: 0 };
}

export async function wafSection(ctx: BenchContext): Promise<string> {
  const { settings, procs } = ctx;
  const dir = join(ctx.work, "waf");
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "waf.yaml"), manifests(ctx.backendPort));
  const out = [
    `one gateway process (--workers 1, raw front); CRS 3.3 (Debian) at paranoia 1, Enforce; requests with a browser's User-Agent, Accept, Accept-Language; wrk -t1 -c${settings.connections} -d${settings.seconds}s; ${settings.rounds} round(s)`,
  ];
  let gw: Target | undefined;
  try {
    const port = await freePort();
    gw = await procs.gatehouse({
      dir,
      port,
      workers: 1,
      name: "waf",
      ready: { probe: "/", host: hosts.open },
    });
    const pids = await targetPids(gw);
    const load = (host: string, path = "/", connections = settings.connections): WrkOptions => ({
      url: `${gw?.url}${path}`,
      headers: { Host: host, ...browser },
      seconds: settings.seconds,
      connections,
      threads: 1,
    });
    const samples = new Map<string, Run[]>([
      ["no waf", []],
      ["waf clean", []],
      ["waf blocked", []],
    ]);
    const stall = new Map<string, Run[]>([
      ["open alone", []],
      ["open+waf", []],
    ]);
    const beside = new Map<string, Run[]>([
      ["waf alone", samples.get("waf clean") ?? []],
      ["waf+open", []],
    ]);
    for (let r = 0; r < settings.rounds; r++) {
      samples.get("no waf")?.push(await measuredRun("waf: no waf", pids, load(hosts.open)));
      samples.get("waf clean")?.push(await measuredRun("waf: clean", pids, load(hosts.waf)));
      samples
        .get("waf blocked")
        ?.push(await measuredRun("waf: blocked", pids, () => blockedRun(load(hosts.waf, attack))));
      // A few connections on the open route, as a latency probe, alone and beside a loaded WAF route.
      stall.get("open alone")?.push(await measuredRun("waf: open alone", [], load(hosts.open, "/", 4)));
      const [probe, waf] = await Promise.all([
        measuredRun("waf: open beside waf", [], load(hosts.open, "/", 4)),
        measuredRun("waf: waf beside open", [], load(hosts.waf)),
      ]);
      stall.get("open+waf")?.push(probe);
      beside.get("waf+open")?.push(waf);
    }
    out.push(wrkTable(samples, "no waf"));
    out.push("the route without a WAF (wrk -c4), alone and while the WAF route is loaded:");
    out.push(wrkTable(stall, "open alone"));
    out.push(`the WAF route (wrk -c${settings.connections}) alone, and meanwhile:`);
    out.push(wrkTable(beside, "waf alone"));
  } finally {
    if (gw !== undefined) await gw.stop();
  }
  return out.join("\n");
}
