/** `gatehouse routes`: the table's rows from a model, and the real CLI on examples/ and a bad file. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeApiServer } from "../../test/helpers/kube-api-server.ts";
import { ingress, service, slice } from "../../test/helpers/kube-fixtures.ts";
import type { GatewayModel, Route } from "../model/index.ts";
import { routeRows, routeTable } from "./routes.ts";

const source = { kind: "HTTPRoute", namespace: "shop", name: "web" };
const route = (match: Partial<Route["match"]>, action: Route["action"]): Route => ({
  name: "r",
  source,
  match: { path: { type: "Prefix", value: "/" }, headers: [], queryParams: [], ...match },
  filters: [],
  action,
});

const model: GatewayModel = {
  backends: {},
  listeners: [
    {
      name: "gateway/shop/gw/http",
      address: "",
      port: 8080,
      protocol: "HTTP",
      source,
      virtualHosts: [
        {
          hostname: "shop.example",
          match: "Exact",
          routes: [
            route(
              { method: "POST", headers: [{ type: "Exact", name: "x-canary", value: "1" }] },
              {
                kind: "Forward",
                backends: [
                  { backendId: "shop/a:80", weight: 3, filters: [] },
                  { backendId: "shop/b:80", weight: 1, filters: [] },
                ],
              },
            ),
            route(
              { path: { type: "Exact", value: "/old" } },
              { kind: "Redirect", location: "https://x/", statusCode: 301 },
            ),
            route(
              { path: { type: "RegularExpression", value: "/v[0-9]+", ignoreCase: true } },
              { kind: "Forward", backends: [] },
            ),
          ],
        },
      ],
    },
  ],
  passthroughListeners: [
    {
      name: "gateway/shop/gw/tls",
      address: "",
      port: 8443,
      source,
      routes: [
        {
          name: "tlsroute/shop/db",
          source: { kind: "TLSRoute", namespace: "shop", name: "db" },
          hostnames: [{ hostname: "db.example", match: "Exact" }],
          backends: [{ backendId: "shop/db:5432", weight: 1 }],
        },
      ],
    },
  ],
};

describe("routeRows", () => {
  test("one row per route in precedence order: match, weights as shares, redirects, no backend", () => {
    expect(routeRows(model)).toEqual([
      [
        "gateway/shop/gw/http (http :8080)",
        "shop.example",
        "POST /* x-canary=1",
        "→ shop/a:80 (75%), shop/b:80 (25%)",
        "HTTPRoute shop/web",
      ],
      ["gateway/shop/gw/http (http :8080)", "shop.example", "/old", "301 → https://x/", "HTTPRoute shop/web"],
      [
        "gateway/shop/gw/http (http :8080)",
        "shop.example",
        "~* /v[0-9]+",
        "500 (no backend)",
        "HTTPRoute shop/web",
      ],
      [
        "gateway/shop/gw/tls (tls passthrough :8443)",
        "db.example",
        "SNI",
        "→ shop/db:5432",
        "TLSRoute shop/db",
      ],
    ]);
  });

  test("the table aligns columns under headings", () => {
    const lines = routeTable(model).trimEnd().split("\n");
    expect(lines[0]?.startsWith("LISTENER")).toBe(true);
    const at = (line: string | undefined) => line?.indexOf("shop.example") ?? -1;
    expect(at(lines[1])).toBe(lines[0]?.indexOf("HOST") ?? -2);
  });
});

describe("gatehouse routes (the CLI)", () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-routes-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function cli(...args: string[]) {
    const proc = Bun.spawn(["bun", join(import.meta.dir, "../main.ts"), "routes", ...args], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    return { out, err, code };
  }

  test("examples/: the four routes bun start serves, no problems", async () => {
    const { out, err, code } = await cli("-f", join(import.meta.dir, "../../examples"));
    expect([code, err]).toEqual([0, ""]);
    expect(out.trimEnd().split("\n")).toHaveLength(5);
    expect(out).toContain("demo.localhost    /api*     → default/api:80  Ingress default/demo");
  });

  test("a file with an unloadable object: exit 1, the problems counted on stderr", async () => {
    writeFileSync(
      join(dir, "bad.yaml"),
      "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: x }\nspec: { rulez: [] }\n",
    );
    const { code, err } = await cli("-f", join(dir, "bad.yaml"));
    expect(code).toBe(1);
    expect(err).toContain("gatehouse routes: 1 problem;");
  });

  test("a flag translate does not take is refused with the usage", async () => {
    const { code, err } = await cli("-f", dir, "--workers", "2");
    expect([code, err.split("\n")[0]]).toEqual([2, "gatehouse routes: not a routes flag: --workers"]);
  });

  test("--kube reads the cluster once: its routes, nothing left out; not with -f too", async () => {
    const api = await KubeApiServer.start();
    try {
      api.apply(service("web"));
      api.apply(slice("web", [8080]));
      api.apply(ingress("shop", "shop.example", "/cart", "web"));
      const kubeconfig = await api.writeKubeconfig(join(dir, "kubeconfig"));
      const { out, err, code } = await cli("--kube", "--kubeconfig", kubeconfig);
      expect(out).toContain("shop.example  /cart*  → demo/web:80");
      expect([code, err]).toEqual([0, ""]);
      const both = await cli("--kube", "-f", dir);
      expect([both.code, both.err.split("\n")[0]]).toEqual([
        2,
        "gatehouse routes: give -f FILE or --kube, not both",
      ]);
    } finally {
      await api.stop();
    }
  });

  test("--kube with a kubeconfig naming no server: exit 2 and why", async () => {
    writeFileSync(
      join(dir, "empty-kubeconfig"),
      "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n",
    );
    const { code, err } = await cli("--kube", "--kubeconfig", join(dir, "empty-kubeconfig"));
    expect(code).toBe(2);
    expect(err).toContain("gatehouse routes: cannot read the cluster:");
  });
});
