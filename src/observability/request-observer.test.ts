import { expect, test } from "bun:test";
import { AccessLog } from "./access-log/access-log.ts";
import { GatewayMetrics } from "./metrics.ts";
import { MetricsAndAccessLog } from "./request-observer.ts";

function observer() {
  const lines: string[] = [];
  const metrics = new GatewayMetrics({ processMetrics: false });
  return { lines, metrics, obs: new MetricsAndAccessLog(metrics, new AccessLog(1, (l) => lines.push(l))) };
}

const count = async (metrics: GatewayMetrics, route: string) => {
  const line = (await metrics.text())
    .split("\n")
    .find((l) => l.startsWith(`gatehouse_requests_total{route="${route}",code_class="2xx"}`));
  return Number(line?.slice(line.lastIndexOf(" ") + 1) ?? 0);
};

test("a route with the access log off (enable-access-log) is counted but not logged, on both paths", async () => {
  const { lines, metrics, obs } = observer();
  const req = new Request("http://a.test/x", { headers: { host: "a.test" } });
  const info = obs.begin(req);
  info.route = "quiet";
  info.unlogged = true;
  obs.end(info, req, new Response("ok"));
  const raw = obs.begin(req);
  raw.route = "quiet";
  raw.unlogged = true;
  obs.endRaw(raw, { method: "GET", host: "a.test", path: "/x", requestId: "", status: 200, bytes: 2 });
  expect(lines).toEqual([]);
  expect(await count(metrics, "quiet")).toBe(2);
});

test("the full path logs the Host the client sent, not one a URLRewrite set for fetch", () => {
  const { lines, obs } = observer();
  const req = new Request("http://a.test/x", { headers: { host: "a.test" } });
  const info = obs.begin(req);
  info.route = "r";
  info.host = "a.test";
  req.headers.set("host", "internal.example");
  obs.end(info, req, new Response("ok"));
  expect(JSON.parse(lines[0] as string).host).toBe("a.test");
});
