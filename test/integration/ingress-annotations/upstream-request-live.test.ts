/**
 * The upstream-request annotations the case table (upstream-request.cases.ts) cannot show, live on both
 * fronts from a folder of Ingresses: `enable-access-log: "false"` and `gatehouse.dev/access-log-sample: "0"`
 * (the access log, caught on stdout, has no line for them; the metrics still count them; a share that is
 * not one is reported and the flag's applies), `service-upstream: "true"` (the Service's cluster IP and
 * port are used: its pods' endpoint here is a closed port) and `proxy-connect-timeout` (an endpoint whose
 * connects never complete: 504 after that long, or the next endpoint when retries are on). On
 * `--front bun` fetch cannot time a connect apart: a connect that never opens fails after 1 to 2 times the
 * limit (request/connect-watch.ts), a written exception in docs/http.md, pinned here.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import {
  type UnansweredPort,
  unansweredPort,
  unansweredPortAvailable,
} from "../../../src/proxy/testing/unanswered-port.ts";
import { annotatedIngressYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { type SeenRequest, startScriptedBackend } from "./harness.ts";

function ingress(name: string, annotations: Record<string, string>, service: string): string {
  return annotatedIngressYaml({ name, namespace: "live", host: `${name}.live.test`, service, annotations });
}

/** A Service (port 80 unless `port`) with its pods' endpoints at these loopback ports. */
function service(name: string, ports: number[], extra: { clusterIP?: string; port?: number } = {}): string {
  const ip = extra.clusterIP === undefined ? "" : `clusterIP: ${extra.clusterIP}, `;
  const slices = ports.map(
    (p, i) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-${i}, namespace: live, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ port: ${p} }]
`,
  );
  return [
    `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: live }
spec: { ${ip}ports: [{ port: ${extra.port ?? 80} }] }
`,
    ...slices,
  ].join("---\n");
}

const canBlackhole = unansweredPortAvailable();

forEachFront("upstream-request annotations, live", (front) => {
  let backend: ReturnType<typeof startScriptedBackend>;
  let blackhole: UnansweredPort | undefined;
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    // Refused connects and timeouts log on purpose.
    restore = setLogSink(() => {});
    backend = startScriptedBackend();
    blackhole = canBlackhole ? await unansweredPort() : undefined;
    const closed = await freePort();
    const hole = blackhole?.port ?? closed;
    dir = await mkdtemp(join(tmpdir(), "gatehouse-upstream-request-"));
    const docs = [
      ingress("quiet", { "enable-access-log": "false" }, "app"),
      ingress("loud", {}, "app"),
      ingress("share0", { "gatehouse.dev/access-log-sample": "0" }, "app"),
      // Not a share: reported, and the flag's share (every request here) applies.
      ingress("sharebad", { "gatehouse.dev/access-log-sample": "1.5" }, "app"),
      // Its Service port is the backend's port on the cluster IP 127.0.0.1; its pods' port is closed.
      ingress("cluster", { "service-upstream": "true" }, "viaip"),
      ingress("pods", {}, "viaip"),
      ingress("connect", { "proxy-connect-timeout": "1" }, "hole"),
      ingress("retried", { "proxy-connect-timeout": "1", "proxy-next-upstream-tries": "2" }, "half"),
      service("app", [backend.port]),
      service("viaip", [closed], { clusterIP: "127.0.0.1", port: backend.port }),
      service("hole", [hole]),
      service("half", [hole, backend.port]),
    ];
    // The viaip Service's port is the backend's, not 80: its Ingresses name that port.
    const text = docs
      .join("---\n")
      .replaceAll("name: viaip, port: { number: 80 }", `name: viaip, port: { number: ${backend.port} }`);
    await writeFile(join(dir, "live.yaml"), text);
    ({ gw, port } = await startTestGateway(
      ["--dir", dir],
      ["--front", front, "--upstream-timeout-ms", "10000", "--access-log-sample", "1"],
    ));
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    backend?.stop();
    blackhole?.close();
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  const get = async (host: string, path = "/") => {
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { host: `${host}.live.test` } });
    const body = await res.text();
    const seen =
      res.headers.get("content-type") === "application/json" ? (JSON.parse(body) as SeenRequest) : undefined;
    return { status: res.status, seen, ms: performance.now() - t0 };
  };

  test('enable-access-log "false": no access-log line for its requests, still counted in metrics', async () => {
    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      expect((await get("quiet", "/q")).status).toBe(200);
      expect((await get("loud", "/l")).status).toBe(200);
      expect((await get("quiet", "/q")).status).toBe(200);
      expect((await get("share0", "/s")).status).toBe(200);
      expect((await get("sharebad", "/s")).status).toBe(200);
    } finally {
      process.stdout.write = write;
    }
    const hosts = lines
      .filter((l) => l.includes('"msg":"access"'))
      .map((l) => (JSON.parse(l) as { host: string }).host);
    expect(hosts).toEqual(["loud.live.test", "sharebad.live.test"]);
    const counted = (await gw.metrics.text())
      .split("\n")
      .find((l) =>
        l.startsWith('gatehouse_requests_total{route="ingress/live/quiet/rule/0/path/0",code_class="2xx"}'),
      );
    expect(Number(counted?.slice(counted.lastIndexOf(" ") + 1))).toBe(2);
  });

  test('service-upstream "true": sent to the Service\'s cluster IP and port, not its pods', async () => {
    const res = await get("cluster", "/via-cluster-ip");
    expect(res.status).toBe(200);
    expect(res.seen?.path).toBe("/via-cluster-ip");
    // The same Service without the annotation goes to its pods, whose port is closed.
    expect((await get("pods")).status).toBe(502);
  });

  test.skipIf(!canBlackhole)(
    `proxy-connect-timeout: a connect that never completes is a 504 after ${front === "raw" ? "that long" : "1 to 2 times that long (written exception)"}`,
    async () => {
      const res = await get("connect");
      expect(res.status).toBe(504);
      expect(res.ms).toBeGreaterThan(900);
      // The raw front times the connect itself; fetch cannot, so a probe after the limit decides (up to 2x).
      expect(res.ms).toBeLessThan(front === "raw" ? 1900 : 2900);
    },
  );

  test.skipIf(!canBlackhole)(
    "proxy-connect-timeout with retries: the next endpoint serves (the connect failed, as nginx's error timeout)",
    async () => {
      // Round robin over [unanswered, backend]: one of two requests meets the unanswered endpoint first.
      const [a, b] = [await get("retried", "/r1"), await get("retried", "/r2")];
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(Math.max(a.ms, b.ms)).toBeGreaterThan(900);
      expect(Math.max(a.ms, b.ms)).toBeLessThan(front === "raw" ? 1900 : 2900);
    },
  );
});
