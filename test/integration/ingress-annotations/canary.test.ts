/**
 * ingress-nginx canaries, live on both fronts (ingress-nginx's own canary example, and the case that went
 * wrong before: a canary Ingress older than the main one took every request). Main and canary are two
 * echo servers that say which Service they are. Precedence: header (always/never, an exact value, a
 * pattern), then cookie (always/never), then weight; a canary with no main path is not served.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

function ingress(name: string, host: string, service: string, created: string, annotations: object): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: shop
  creationTimestamp: "${created}"
  annotations: ${JSON.stringify(Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v])))}
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${host}
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: ${service}, port: { number: 80 } } } }
`;
}

const OLD = "2024-01-01T00:00:00Z";
const NEW = "2025-01-01T00:00:00Z";

function manifests(main: number, canary: number): string {
  return [
    // The canary is the older object: it must still only join the main Ingress, never replace it.
    ingress("main-w", "weight.test", "main", NEW, {}),
    ingress("canary-w", "weight.test", "canary", OLD, { canary: "true", "canary-weight": "30" }),
    ingress("main-h", "header.test", "main", OLD, {}),
    ingress("canary-h", "header.test", "canary", NEW, {
      canary: "true",
      "canary-by-header": "X-Canary",
      "canary-by-cookie": "use_canary",
      "canary-weight": "100",
    }),
    ingress("main-v", "value.test", "main", OLD, {}),
    ingress("canary-v", "value.test", "canary", NEW, {
      canary: "true",
      "canary-by-header": "X-Region",
      "canary-by-header-value": "eu-west",
    }),
    ingress("main-p", "pattern.test", "main", OLD, {}),
    ingress("canary-p", "pattern.test", "canary", NEW, {
      canary: "true",
      "canary-by-header": "X-User",
      "canary-by-header-pattern": "^(alice|bob)$",
    }),
    ingress("main-t", "total.test", "main", OLD, {}),
    ingress("canary-t", "total.test", "canary", NEW, {
      canary: "true",
      "canary-weight": "3",
      "canary-weight-total": "3",
    }),
    ingress("canary-alone", "alone.test", "canary", NEW, { canary: "true", "canary-weight": "100" }),
    // Never open: the main Ingress's access controls (a source range without the client) cover its canary's
    // routes too, and a canary asking for access controls of its own fails closed on its routes.
    ingress("main-g", "guarded-main.test", "main", OLD, { "whitelist-source-range": "10.0.0.0/8" }),
    ingress("canary-g", "guarded-main.test", "canary", NEW, {
      canary: "true",
      "canary-by-header": "X-Canary",
    }),
    ingress("main-c", "guarded-canary.test", "main", OLD, {}),
    ingress("canary-c", "guarded-canary.test", "canary", NEW, {
      canary: "true",
      "canary-by-header": "X-Canary",
      "whitelist-source-range": "10.0.0.0/8",
    }),
    // Its weighted share too: a canary that fails closed, or asks for its own rate limit, sends none.
    ingress("main-gw", "guarded-weight.test", "main", OLD, {}),
    ingress("canary-gw", "guarded-weight.test", "canary", NEW, {
      canary: "true",
      "canary-weight": "100",
      "whitelist-source-range": "10.0.0.0/8",
    }),
    ingress("main-lw", "limited-weight.test", "main", OLD, {}),
    ingress("canary-lw", "limited-weight.test", "canary", NEW, {
      canary: "true",
      "canary-weight": "100",
      "limit-rps": "5",
    }),
    serviceYaml("main", "shop", main),
    serviceYaml("canary", "shop", canary),
  ].join("---\n");
}

forEachFront("ingress-nginx canaries", (front) => {
  let main: EchoServer;
  let canary: EchoServer;
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    main = startEchoServer({ service: "main", namespace: "shop" });
    canary = startEchoServer({ service: "canary", namespace: "shop" });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-canary-"));
    await writeFile(join(dir, "all.yaml"), manifests(main.port, canary.port));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front]));
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    await Promise.all([main?.stop(), canary?.stop()]);
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  /** Which Service answered (the echo server names its own). */
  async function who(host: string, headers: Record<string, string> = {}): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host, ...headers } });
    const body = (await res.json()) as { service?: string };
    expect(res.status).toBe(200);
    return body.service ?? "?";
  }

  test("canary-weight 30 of 100: about 30% to the canary, even when the canary Ingress is older", async () => {
    let toCanary = 0;
    for (let i = 0; i < 200; i++) if ((await who("weight.test")) === "canary") toCanary++;
    expect(toCanary).toBeGreaterThan(30);
    expect(toCanary).toBeLessThan(90);
  });

  test("canary-by-header: always → canary, never → main even with weight 100; the cookie after the header", async () => {
    expect(await who("header.test", { "x-canary": "always" })).toBe("canary");
    expect(await who("header.test", { "x-canary": "never" })).toBe("main");
    expect(await who("header.test", { "x-canary": "never", cookie: "use_canary=always" })).toBe("main");
    expect(await who("header.test", { cookie: "a=1; use_canary=never; b=2" })).toBe("main");
    expect(await who("header.test", { cookie: "use_canary=always" })).toBe("canary");
    // Any other value falls through to the weight (100 here).
    expect(await who("header.test", { "x-canary": "maybe" })).toBe("canary");
  });

  test("canary-by-header-value: only that value goes to the canary", async () => {
    expect(await who("value.test", { "x-region": "eu-west" })).toBe("canary");
    expect(await who("value.test", { "x-region": "us-east" })).toBe("main");
    expect(await who("value.test", { "x-region": "always" })).toBe("main");
    expect(await who("value.test")).toBe("main");
  });

  test("canary-by-header-pattern: a match goes to the canary", async () => {
    expect(await who("pattern.test", { "x-user": "alice" })).toBe("canary");
    expect(await who("pattern.test", { "x-user": "bob" })).toBe("canary");
    expect(await who("pattern.test", { "x-user": "carol" })).toBe("main");
  });

  test("canary-weight-total: a weight equal to the total sends everything to the canary", async () => {
    for (let i = 0; i < 5; i++) expect(await who("total.test")).toBe("canary");
  });

  test("never open: the canary fails closed with its main Ingress, and on its own", async () => {
    const status = async (host: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host, ...headers } });
      await res.arrayBuffer();
      return res.status;
    };
    expect(await status("guarded-main.test", { "x-canary": "always" })).toBe(403);
    expect(await status("guarded-main.test")).toBe(403);
    expect(await status("guarded-canary.test", { "x-canary": "always" })).toBe(403);
    expect(await who("guarded-canary.test")).toBe("main");
    for (let i = 0; i < 5; i++) {
      expect(await who("guarded-weight.test")).toBe("main");
      expect(await who("limited-weight.test")).toBe("main");
    }
  });

  test("a canary with no main Ingress for its path is not served", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host: "alone.test" } });
    expect(res.status).toBe(404);
    await res.arrayBuffer();
  });
});
