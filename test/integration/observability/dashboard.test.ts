/**
 * The dashboard on the admin port of a live gateway serving a folder, on both fronts: its JSON counts
 * the traffic that crossed the front under test, shows no secret (TLS key, basic-auth hash, API key),
 * refuses a flood of event streams and a huge query; and in a real browser (Debian's Chromium through
 * playwright-core) a route added to the folder and a broken file's problem appear without a reload.
 * The screenshot goes to the test's temporary folder (and to GATEHOUSE_DASHBOARD_SCREENSHOT when set:
 * that is how docs/dashboard.png is made).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFile, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { echoServiceYaml, tlsIngressYaml, tlsSecretYaml } from "../tls/fixtures.ts";

const cert = selfSigned("secure.dash.test");
// `openssl passwd -apr1 -salt abcdefgh secret`.
const htpasswdHash = "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/";
const apiKey = "dashboard-api-key-0123456789";

const guardedYaml = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: staff
  namespace: demo
  annotations: { nginx.ingress.kubernetes.io/auth-type: basic, nginx.ingress.kubernetes.io/auth-secret: users }
spec:
  ingressClassName: gatehouse
  rules:
    - host: staff.dash.test
      http: { paths: [{ path: /, pathType: Prefix, backend: { service: { name: echo, port: { number: 80 } } } }] }
---
apiVersion: v1
kind: Secret
metadata: { name: users, namespace: demo }
stringData: { auth: "alice:${htpasswdHash}" }
---
apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: keys, namespace: demo }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: web }]
  apiKeyAuth: { credentialRefs: [{ name: keys }] }
---
apiVersion: v1
kind: Secret
metadata: { name: keys, namespace: demo }
stringData: { partner: ${apiKey} }
`;

interface Stats {
  version: number;
  routes: { route: string; counts: number[]; rate: number; p50Ms: number | null }[];
}

forEachFront("the dashboard", (front) => {
  let dir: string;
  let echo: EchoServer;
  let gw: RunningGateway;
  let admin: string;
  let http: number;
  let restoreSink: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    echo = startEchoServer({ service: "echo", namespace: "demo" });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-dashboard-"));
    await writeFile(join(dir, "echo.yaml"), echoServiceYaml(echo.port));
    await writeFile(join(dir, "web.yaml"), tlsIngressYaml("web", "web.dash.test", []));
    const secure = tlsIngressYaml("secure", "secure.dash.test", [[["secure.dash.test"], "secure"]]);
    await writeFile(join(dir, "secure.yaml"), `${tlsSecretYaml("secure", cert)}---\n${secure}`);
    await writeFile(join(dir, "guarded.yaml"), guardedYaml);
    ({ gw, port: http } = await startTestGateway(["--dir", dir], ["--front", front]));
    admin = `http://127.0.0.1:${gw.admin.port}`;
  });

  afterAll(async () => {
    await gw?.stop();
    await echo?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restoreSink) setLogSink(restoreSink);
  });

  test(`live stats count requests that crossed the ${front} front, per route, at once`, async () => {
    const web = "ingress/demo/web/rule/0/path/0";
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`http://127.0.0.1:${http}/`, {
        headers: { host: "web.dash.test", "x-api-key": apiKey },
      });
      expect(res.status).toBe(200);
    }
    expect((await fetch(`http://127.0.0.1:${http}/`, { headers: { host: "nowhere.test" } })).status).toBe(
      404,
    );
    const stats = (await (await fetch(`${admin}/api/stats`)).json()) as Stats;
    const row = stats.routes.find((r) => r.route === web);
    expect(row?.counts.reduce((a, b) => a + b, 0)).toBe(5);
    expect(row?.rate).toBeGreaterThan(0);
    expect(row?.p50Ms).toBeGreaterThan(0);
    expect(stats.routes.find((r) => r.route === "(none)")?.counts.at(-1)).toBe(1);
  });

  test("the overview lists listeners with expiry, routes with sources, backends, policies; nothing secret", async () => {
    const text = await (await fetch(`${admin}/api/overview`)).text();
    const o = JSON.parse(text) as {
      listeners: { certificates: { source: { name: string }; notAfter: number }[] }[];
      routes: {
        name: string;
        source: { kind: string; namespace: string; name: string };
        policies: string[];
      }[];
      backends: { id: string; endpoints: unknown[] }[];
      policies: { kind: string; name: string; routes: string[]; summary: string }[];
    };
    const secureCert = o.listeners.flatMap((l) => l.certificates).find((c) => c.source.name === "secure");
    expect(Math.abs((secureCert?.notAfter ?? 0) - (Date.now() / 1000 + 86_400))).toBeLessThan(600);
    const web = o.routes.find((r) => r.name === "ingress/demo/web/rule/0/path/0");
    expect(web?.source).toEqual({ kind: "Ingress", namespace: "demo", name: "web" });
    expect(web?.policies).toEqual(["AuthPolicy demo/keys"]);
    expect(o.backends.find((b) => b.id === "demo/echo:80")?.endpoints).toHaveLength(1);
    const keys = o.policies.find((p) => p.kind === "AuthPolicy" && p.name === "keys");
    expect(keys?.routes).toEqual(["ingress/demo/web/rule/0/path/0"]);
    expect(keys?.summary).toBe("api keys");
    const page = await (await fetch(`${admin}/`)).text();
    for (const shown of [text, page]) {
      expect(shown).not.toContain("PRIVATE KEY");
      expect(shown).not.toContain(htpasswdHash);
      expect(shown).not.toContain("abcdefgh");
      expect(shown).not.toContain(apiKey);
      for (const l of cert.keyPem.split("\n").filter((x) => x.length > 20 && !x.startsWith("-----")))
        expect(shown).not.toContain(l);
    }
    // What is around the secrets is there: the checks above look where they would be.
    expect(text).toContain("secure.dash.test");
    expect(text).toContain("staff.dash.test");
  });

  test("a flood of event streams: the 17th is refused with 503, a slot frees when a client leaves", async () => {
    const open = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const abort = new AbortController();
        const res = await fetch(`${admin}/api/events`, { signal: abort.signal });
        expect(res.status).toBe(200);
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        const first = new TextDecoder().decode((await reader.read()).value);
        expect(first).toContain("event: stats");
        return { abort, reader };
      }),
    );
    const refused = await fetch(`${admin}/api/events`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("10");
    // Polling still answers while the streams are full.
    expect((await fetch(`${admin}/api/stats`)).status).toBe(200);
    open[0]?.abort.abort();
    let again = 503;
    for (let i = 0; i < 50 && again === 503; i++) {
      await Bun.sleep(50);
      const res = await fetch(`${admin}/api/events`);
      again = res.status;
      if (again === 200) await res.body?.cancel();
    }
    expect(again).toBe(200);
    for (const s of open.slice(1)) s.abort.abort();
  });

  test("a huge query is refused with 414", async () => {
    const q = "x".repeat(5000);
    expect((await fetch(`${admin}/?host=${q}`)).status).toBe(414);
    expect((await fetch(`${admin}/api/overview?host=${q}`)).status).toBe(414);
  });

  describe("in Chromium", () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
    });
    afterAll(async () => {
      await browser?.close();
    });

    test("a route added to the folder and a broken file's problem appear without a reload", async () => {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(`${admin}/`);
      await page.waitForSelector('tr[data-route="ingress/demo/web/rule/0/path/0"]');
      await page.waitForSelector("#live.ok");
      let navigations = 0;
      page.on("framenavigated", () => navigations++);

      // Served, with an info problem (an nginx setting with no effect): the route links to it.
      await writeFile(
        join(dir, "added.yaml"),
        tlsIngressYaml("added", "added.dash.test", [], {
          "nginx.ingress.kubernetes.io/proxy-buffer-size": "8k",
        }),
      );
      await page.waitForSelector('tr[data-route="ingress/demo/added/rule/0/path/0"]', { timeout: 10_000 });
      // Upper-case host: translation rejects this Ingress and says so.
      await writeFile(join(dir, "broken.yaml"), tlsIngressYaml("broken", "Broken.Dash.Test", []));
      const problem = await page.waitForSelector('#problems tr[data-object="Ingress demo/broken"]', {
        timeout: 10_000,
      });
      expect(await problem.textContent()).toContain("error");

      // The route's problem link filters the problem list down to its Ingress.
      await page.click('tr[data-route="ingress/demo/added/rule/0/path/0"] a');
      const shown = await page.$$eval("#problems tr", (trs) => trs.map((t) => t.getAttribute("data-object")));
      expect(shown.length).toBeGreaterThan(0);
      expect(new Set(shown)).toEqual(new Set(["Ingress demo/added"]));
      await page.click("#problem-filter a");
      expect(await page.$$eval("#problems tr", (trs) => trs.length)).toBeGreaterThan(shown.length);

      // Traffic shows in the route's row.
      for (let i = 0; i < 3; i++)
        await fetch(`http://127.0.0.1:${http}/`, { headers: { host: "added.dash.test" } });
      await page.waitForFunction(
        () => {
          // Runs in the page: `document` is the browser's (this project's TypeScript has no DOM types).
          const doc = (
            globalThis as unknown as {
              document: { querySelector(s: string): { querySelector(s: string): unknown } | null };
            }
          ).document;
          const row = doc.querySelector('tr[data-route="ingress/demo/added/rule/0/path/0"]');
          return row !== null && row.querySelector("svg") !== null;
        },
        undefined,
        { timeout: 10_000 },
      );

      // Search by host: only the routes that would serve it stay.
      await page.fill("#q-host", "staff.dash.test");
      const hosts = await page.$$eval("#routes tr td:first-child", (tds) => tds.map((t) => t.textContent));
      // Once per listener that serves it (the default HTTP and HTTPS listeners).
      expect([...new Set(hosts)]).toEqual(["staff.dash.test"]);
      await page.fill("#q-host", "");

      await page.evaluate("window.scrollTo(0, 0)"); // the problem link scrolled down; the sticky header
      const shot = join(dir, `dashboard-${front}.png`);
      await page.screenshot({ path: shot, fullPage: true });
      expect((await stat(shot)).size).toBeGreaterThan(10_000);
      const target = process.env.GATEHOUSE_DASHBOARD_SCREENSHOT;
      if (target && front === "raw") await copyFile(shot, target);
      expect(navigations).toBe(0);
      expect(errors).toEqual([]);
      await page.close();
    }, 30_000);
  });
});
