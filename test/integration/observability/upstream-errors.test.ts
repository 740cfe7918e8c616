/**
 * gatehouse_upstream_errors_total on both fronts: an endpoint nobody listens on counts as `connect`, one
 * that answers after the route's time limit as `timeout`, a garbled answer as `connect`, and a retried
 * request counts each failed attempt. The backend label is the model's backend id, never an address.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TCPSocketListener } from "bun";
import { GatewayMetrics } from "../../../src/observability/metrics.ts";
import { MetricsAndAccessLog } from "../../../src/observability/request-observer.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import {
  backend,
  forwardTo,
  listener,
  match,
  model,
  route,
  vhost,
} from "../../../src/proxy/testing/model.ts";
import { startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";

let upstream: TestUpstream;
let garbler: TCPSocketListener<undefined>;
let closedPort: number;

beforeAll(async () => {
  upstream = startUpstream("slow");
  // Answers every request with bytes that are no HTTP response head.
  garbler = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: { data: (s) => void s.end("NOT HTTP AT ALL\r\n\r\n") },
  });
  closedPort = await freePort();
});

afterAll(async () => {
  await upstream?.stop();
  garbler?.stop(true);
});

/** A sample's value in a Prometheus text exposition; 0 when absent. */
function sample(text: string, name: string, labels: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

const errors = (text: string, backendId: string, kind: string) =>
  sample(text, "gatehouse_upstream_errors_total", `backend="${backendId}",kind="${kind}"`);

forEachFront("upstream errors", (front) => {
  const metrics = new GatewayMetrics({ processMetrics: false });
  let proxy: GatewayServer;
  let base: string;

  beforeAll(async () => {
    proxy = new GatewayServer({
      bind: "127.0.0.1",
      front,
      observer: new MetricsAndAccessLog(metrics, undefined),
    });
    const routes = [
      route("r/down", match("/down"), forwardTo("test/down:80")),
      route("r/slow", match("/slow"), forwardTo("test/slow:80"), { timeouts: { backendRequestMs: 150 } }),
      route("r/garbled", match("/garbled"), forwardTo("test/garbled:80")),
      route("r/retried", match("/retried"), forwardTo("test/retried:80"), {
        retry: { attempts: 2, codes: [], backoffMs: 0 },
      }),
      route("r/ok", match("/"), forwardTo("test/slow:80")),
    ];
    await proxy.apply(
      model(
        [listener([vhost("*", routes)])],
        [
          backend("test/down:80", [closedPort]),
          backend("test/slow:80", [upstream.port]),
          backend("test/garbled:80", [garbler.port]),
          backend("test/retried:80", [closedPort]),
        ],
      ),
    );
    base = `http://127.0.0.1:${proxy.ports()[0]?.port}`;
  });

  afterAll(async () => {
    await proxy?.stop();
  });

  test("an unreachable endpoint counts as connect, by backend id", async () => {
    const res = await fetch(`${base}/down`);
    expect(res.status).toBe(502);
    await res.text();
    const text = await metrics.text();
    expect(errors(text, "test/down:80", "connect")).toBe(1);
    expect(errors(text, "test/down:80", "timeout")).toBe(0);
    // The label is the configured id: no endpoint address ever appears.
    expect(text).not.toContain(`127.0.0.1:${closedPort}`);
  });

  test("an upstream slower than the route's time limit counts as timeout", async () => {
    const res = await fetch(`${base}/slow/1000`);
    expect(res.status).toBe(504);
    await res.text();
    expect(errors(await metrics.text(), "test/slow:80", "timeout")).toBe(1);
  });

  test("a garbled answer counts as connect (502)", async () => {
    const res = await fetch(`${base}/garbled`);
    expect(res.status).toBe(502);
    await res.text();
    expect(errors(await metrics.text(), "test/garbled:80", "connect")).toBe(1);
  });

  test("each failed attempt of a retried request counts", async () => {
    const res = await fetch(`${base}/retried`);
    expect(res.status).toBe(502);
    await res.text();
    expect(errors(await metrics.text(), "test/retried:80", "connect")).toBe(3);
  });

  test("successful requests add nothing", async () => {
    const before = await metrics.text();
    for (let i = 0; i < 5; i++) expect((await fetch(`${base}/fine`)).status).toBe(200);
    const after = await metrics.text();
    const lines = (t: string) => t.split("\n").filter((l) => l.startsWith("gatehouse_upstream_errors_total"));
    expect(lines(after)).toEqual(lines(before));
  });
});
