/**
 * HTTP/2 section: the same GET requests over TLS as HTTP/1.1 and as HTTP/2, to Gatehouse with `--http2
 * true` (the raw front keeps HTTP/1.1 on its own path and hands ALPN `h2` connections to the node:http2
 * session server) and to nginx with `listen … ssl http2`, one load tool for both protocols (h2load, with
 * `--h1` for HTTP/1.1) so the protocols differ and nothing else. Rows: HTTP/1.1 and HTTP/2 with one
 * stream a connection (as many connections as the other sections), and HTTP/2 with a quarter of the
 * connections carrying 4 streams each (a browser's multiplexing). The question it answers (issue 29):
 * whether HTTP/2 over TLS is within 10% of HTTP/1.1 over TLS, the condition for offering it by default.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { BenchContext } from "./context.ts";
import { runH2load } from "./h2load.ts";
import { gateway, nginxTls } from "./https.ts";
import { measuredRun, type Run, type Target, targetPids } from "./procs.ts";
import { wrkTable } from "./proxy.ts";
import { type RouteSet, routeSet } from "./routes.ts";
import { median } from "./stats.ts";
import { makeCertificate } from "./tls.ts";

interface Load {
  readonly title: string;
  readonly h1: boolean;
  readonly connections: number;
  readonly streams: number;
}

export async function http2Section(ctx: BenchContext): Promise<string> {
  const { settings } = ctx;
  const set = settings.smoke ? routeSet(4, 2) : routeSet(100, 10);
  // The even hosts are the TLS Ingresses (https.ts); every request goes to the first of them.
  const tlsSet: RouteSet = { hosts: set.hosts.filter((_, i) => i % 2 === 0), paths: set.paths };
  const host = tlsSet.hosts[0] as string;
  const path = `${tlsSet.paths[0]}/x`;
  const dir = join(ctx.work, "http2");
  await mkdir(dir, { recursive: true });
  const cert = await makeCertificate(dir, ["*.bench.test", "127.0.0.1"]);
  const c = settings.connections;
  const loads: Load[] = [
    { title: `HTTP/1.1 over TLS (h2load --h1 -c${c})`, h1: true, connections: c, streams: 1 },
    { title: `HTTP/2 over TLS (h2load -c${c} -m1)`, h1: false, connections: c, streams: 1 },
    {
      title: `HTTP/2 over TLS, multiplexed (h2load -c${Math.max(1, c / 4)} -m4)`,
      h1: false,
      connections: Math.max(1, c / 4),
      streams: 4,
    },
  ];
  const out = [
    `GET ${path} on ${host} over TLS; one self-signed EC P-256 certificate; ${settings.seconds} s a run; ${settings.rounds} round(s); Gatehouse --front raw --http2 true, nginx listen ssl http2`,
  ];
  for (const n of settings.workerCounts) {
    const targets: Target[] = [];
    try {
      targets.push(await nginxTls(ctx, tlsSet, cert, n, dir, true));
      targets.push(await gateway(ctx, set, cert, n, "raw", dir, ["--http2", "true"]));
      const rates = new Map<string, number>();
      for (const load of loads) {
        const samples = new Map<string, Run[]>(targets.map((t) => [t.name, []]));
        for (let r = 0; r < settings.rounds; r++) {
          // Alternate the order each round so slow drift on the machine does not favour one side.
          const order = r % 2 === 0 ? targets : [...targets].reverse();
          for (const t of order) {
            const run = () =>
              runH2load({
                url: `${t.url}${path}`,
                seconds: settings.seconds,
                connections: load.connections,
                streams: load.streams,
                h1: load.h1,
                // h2load takes `:authority` as the Host field under --h1 too (a Host field would be a second one).
                headers: { ":authority": host },
                logFile: join(dir, "requests.log"),
              });
            samples
              .get(t.name)
              ?.push(await measuredRun(`${t.name} (${load.title})`, await targetPids(t), run));
          }
        }
        for (const [name, runs] of samples)
          rates.set(`${name}\t${load.title}`, median(runs.map((x) => x.rps)));
        out.push("", `N=${n}, ${load.title}`, wrkTable(samples, "nginx"));
      }
      out.push("", `N=${n}, HTTP/2 against HTTP/1.1 over TLS (median req/s, same target):`);
      for (const t of targets) {
        const h1 = rates.get(`${t.name}\t${loads[0]?.title}`) ?? 0;
        const parts = loads.slice(1).map((l) => {
          const r = rates.get(`${t.name}\t${l.title}`) ?? 0;
          return `${l.streams === 1 ? "-m1" : `-m${l.streams}`} ${h1 > 0 ? (r / h1).toFixed(2) : "-"}×`;
        });
        out.push(`  ${t.name}: ${parts.join(", ")}`);
      }
    } finally {
      for (const t of targets) await t.stop();
    }
  }
  return out.join("\n");
}
