/** The examples folder must load cleanly and translate without problems: `bun start` serves it as is. */
import { describe, expect, test } from "bun:test";
import { loadFolder } from "../src/sources/file/index.ts";
import { translate } from "../src/translate/translate.ts";
import { startDemoBackends } from "./backends.ts";

describe("examples/", () => {
  test("loads without errors and translates without problems", async () => {
    const load = await loadFolder(import.meta.dir);
    expect(load.errors).toEqual([]);
    expect(load.skippedKinds).toEqual([]);
    const { snapshot } = load;
    expect([snapshot.ingressClasses.length, snapshot.ingresses.length, snapshot.services.length]).toEqual([
      1, 2, 2,
    ]);
    const result = translate(snapshot);
    expect(result.problems).toEqual([]);
    const hosts = result.model.listeners.flatMap((l) => l.virtualHosts.map((v) => v.hostname));
    expect(hosts.sort()).toEqual(["*.apps.localhost", "demo.localhost"]);
    // web-health.yaml: Service web's backends are health-checked, api's are not.
    const checked = Object.values(result.model.backends).filter((b) => b.healthCheck !== undefined);
    expect(checked.map((b) => [b.service.name, b.healthCheck?.passive?.consecutive5xxErrors])).toEqual([
      ["web", 3],
    ]);
  });

  test("the demo backends answer with the conformance echo JSON, naming their service and pod", async () => {
    const backends = startDemoBackends([
      { service: "web", pod: "web-1", port: 0 },
      { service: "api", pod: "api-1", port: 0 },
    ]);
    try {
      const [web, api] = backends.ports;
      const res = await fetch(`http://127.0.0.1:${api}/api/hello?x=1`, { headers: { "x-demo": "1" } });
      const body = (await res.json()) as Record<string, unknown>;
      expect(Object.keys(body)).toEqual([
        "path",
        "host",
        "method",
        "proto",
        "headers",
        "namespace",
        "ingress",
        "service",
        "pod",
      ]);
      expect(body).toMatchObject({
        path: "/api/hello?x=1",
        host: `127.0.0.1:${api}`,
        method: "GET",
        proto: "HTTP/1.1",
        headers: { "X-Demo": ["1"] },
        namespace: "default",
        service: "api",
        pod: "api-1",
      });
      expect(((await (await fetch(`http://127.0.0.1:${web}/`)).json()) as { pod: string }).pod).toBe("web-1");
    } finally {
      backends.stop();
    }
  });
});
