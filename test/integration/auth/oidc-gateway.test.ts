/**
 * OIDC login through the real request path on both fronts: a GatewayServer with an AuthEnforcer serving
 * the translated model (an Ingress, its AuthPolicy with `oidc`, the Service's EndpointSlice to a real
 * upstream), a real OpenID provider, a browser with a cookie jar. On the raw front the login flow (the
 * redirect to the provider, the callback, a session cookie not yet seen by this process) takes the full
 * request path, and every request with a session this process has verified is served by the front itself:
 * the relay counter does not move.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AuthEnforcer } from "../../../src/auth/enforce.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { relayedCount } from "../../../src/proxy/raw-front/relayed-exchange.ts";
import { startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { translate } from "../../../src/translate/translate.ts";
import { loadCase } from "../../golden/load.ts";
import { serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { Browser, oidcPolicyYaml, startIdP, type TestIdP, webIngressYaml } from "../../helpers/oidc-idp.ts";
import { freePort } from "../../helpers/ports.ts";

forEachFront("OIDC login through the gateway", (front) => {
  let idp: TestIdP;
  let upstream: TestUpstream;
  let enforcer: AuthEnforcer;
  let proxy: GatewayServer;
  let app: string;

  beforeAll(async () => {
    const port = await freePort();
    app = `http://127.0.0.1:${port}`;
    // Tokens outlive the test: a session re-verified after expiry would be relayed again (a refresh).
    idp = await startIdP(() => app, 600);
    upstream = startUpstream("web");
    const loaded = loadCase(`${webIngressYaml("app", "/")}---
${serviceYaml("web", "default", upstream.port)}---
${oidcPolicyYaml(idp.issuer, app, ["app"])}`);
    expect(loaded.problems).toEqual([]);
    const { model, problems } = translate(loaded.snapshot, { httpPort: port });
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
    enforcer = new AuthEnforcer({ keys: { timeoutMs: 2000 } });
    enforcer.update(model);
    await enforcer.ready();
    proxy = new GatewayServer({ bind: "127.0.0.1", guards: { auth: enforcer }, front });
    await proxy.apply(model);
  });

  afterAll(async () => {
    await proxy?.stop();
    enforcer?.close();
    await upstream?.stop();
    idp?.close();
  });

  describe("login, session, logout", () => {
    const browser = new Browser(() => idp.issuer);

    test("no session: a browser is sent to the provider, a JSON client gets 401; the upstream sees neither", async () => {
      const before = upstream.requests.length;
      const json = await fetch(`${app}/api`, { headers: { accept: "application/json" } });
      expect(json.status).toBe(401);
      const { res } = await browser.go(`${app}/page?x=1`, {}, false);
      expect(res.status).toBe(302);
      expect(new URL(res.headers.get("location") as string).origin).toBe(idp.issuer);
      expect(upstream.requests.length).toBe(before);
    });

    test("login and callback: back on the page asked for, the claim header reaches the upstream", async () => {
      const relayed = relayedCount();
      const { res, url } = await browser.login(`${app}/page?x=1`);
      // The counter counts: the login flow (the callback at least) took the full request path.
      if (front === "raw") expect(relayedCount()).toBeGreaterThan(relayed);
      expect(url).toBe(`${app}/page?x=1`);
      expect(res.status).toBe(200);
      const got = (await res.json()) as { path: string; headers: Record<string, string> };
      expect(got.path).toBe("/page?x=1");
      expect(got.headers["x-email"]).toBe("alice@example.test");
      expect(browser.sessionCookie()).toBeDefined();
    });

    test("with the session, requests are served (the raw front itself: no relayed request)", async () => {
      const relayed = relayedCount();
      for (let i = 0; i < 5; i++) {
        const { res } = await browser.go(`${app}/n/${i}`, {
          headers: { accept: "application/json", "x-email": "forged@evil.test" },
        });
        expect(res.status).toBe(200);
        const got = (await res.json()) as { path: string; headers: Record<string, string> };
        expect(got.path).toBe(`/n/${i}`);
        expect(got.headers["x-email"]).toBe("alice@example.test");
      }
      if (front === "raw") expect(relayedCount()).toBe(relayed);
    });

    test("a forged session cookie is refused, never forwarded", async () => {
      const name = browser.sessionCookie() as string;
      const value = browser.jar.get(name) as string;
      const before = upstream.requests.length;
      const res = await fetch(`${app}/x`, {
        headers: { cookie: `${name}=${value.slice(0, -4)}AAAA`, accept: "application/json" },
      });
      expect(res.status).toBe(401);
      expect(upstream.requests.length).toBe(before);
    });

    test("logout clears the session; the next request is a login again", async () => {
      const { res } = await browser.go(`${app}/oauth2/logout`, {}, false);
      expect(res.status).toBe(302);
      expect(browser.sessionCookie()).toBeUndefined();
      const json = await browser.go(`${app}/page`, { headers: { accept: "application/json" } });
      expect(json.res.status).toBe(401);
    });
  });
});
