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
  info.logShare = 0;
  obs.end(info, req, new Response("ok"));
  const raw = obs.begin(req);
  raw.route = "quiet";
  raw.logShare = 0;
  obs.endRaw(raw, { method: "GET", host: "a.test", path: "/x", requestId: "", status: 200, bytes: 2 });
  expect(lines).toEqual([]);
  expect(await count(metrics, "quiet")).toBe(2);
});

test("a route's own share replaces the flag's, on both paths", () => {
  // The flag logs every request; the routes ask for none, all, and about half.
  const { lines, obs } = observer();
  const req = new Request("http://a.test/x", { headers: { host: "a.test" } });
  const send = (route: string, share: number | undefined) => {
    for (let i = 0; i < 200; i++) {
      const info = obs.begin(req);
      info.route = route;
      info.logShare = share;
      obs.end(info, req, new Response("ok"));
      const raw = obs.begin(req);
      raw.route = route;
      raw.logShare = share;
      obs.endRaw(raw, { method: "GET", host: "a.test", path: "/x", requestId: "", status: 200, bytes: 2 });
    }
  };
  send("none", 0);
  send("all", 1);
  send("half", 0.5);
  send("flag", undefined);
  const per = (route: string) => lines.filter((l) => JSON.parse(l).route === route).length;
  expect([per("none"), per("all"), per("flag")]).toEqual([0, 400, 400]);
  // 400 draws at 0.5: outside 120…280 with probability below 1e-15.
  expect(per("half")).toBeGreaterThan(120);
  expect(per("half")).toBeLessThan(280);
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
