/**
 * OIDC browser login end to end against a real OpenID provider (the `oidc-provider` package, run by Bun
 * on loopback through node:http): login redirect with PKCE, the provider's login and consent pages,
 * callback, session cookie, refresh with the refresh token when the tokens expire, RP-initiated logout.
 * The gateway is a tiny `Bun.serve` calling `AuthEnforcer.check` (the stand-in for the proxy hook).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AuthEnforcer } from "../../../src/auth/enforce.ts";
import type { Route } from "../../../src/model/index.ts";
import { translate } from "../../../src/translate/translate.ts";
import { loadCase } from "../../golden/load.ts";
import { Browser, oidcPolicyYaml, startIdP, type TestIdP, webIngressYaml } from "../../helpers/oidc-idp.ts";

let idp: TestIdP;
let issuer: string;
let gateway: ReturnType<typeof Bun.serve>;
let app: string;
let route: Route | undefined;
/** A second route (another Ingress) under the same policy: the session must work there too. */
let reports: Route | undefined;
let enforcer: AuthEnforcer;

beforeAll(async () => {
  gateway = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: standIn });
  app = `http://127.0.0.1:${gateway.port}`;
  idp = await startIdP(() => app);
  issuer = idp.issuer;
  const loaded = loadCase(`${webIngressYaml("app", "/")}---
${webIngressYaml("reports", "/reports")}---
${oidcPolicyYaml(issuer, app, ["app", "reports"])}`);
  expect(loaded.problems).toEqual([]);
  const { model, problems } = translate(loaded.snapshot);
  expect(problems.filter((p) => p.object.kind === "AuthPolicy")).toEqual([]);
  const all = model.listeners[0]?.virtualHosts[0]?.routes ?? [];
  route = all.find((r) => r.name.startsWith("ingress/default/app/"));
  reports = all.find((r) => r.name.startsWith("ingress/default/reports/"));
  enforcer = new AuthEnforcer({ keys: { timeoutMs: 2000 } });
  enforcer.update(model);
  await enforcer.ready();
});
afterAll(() => {
  enforcer?.close();
  gateway?.stop(true);
  idp?.close();
});

async function standIn(req: Request): Promise<Response> {
  const u = new URL(req.url);
  if (u.pathname === "/bye") return new Response("bye");
  const matched = u.pathname.startsWith("/reports") ? reports : route;
  if (!matched?.auth) return new Response("not ready", { status: 503 });
  const url = { path: u.pathname, query: u.search.slice(1), host: u.host, scheme: "http" as const };
  const outcome = await enforcer.check(matched.auth, req, url);
  if (!outcome.ok) return outcome.response;
  const headers = new Headers(req.headers);
  for (const name of outcome.removeHeaders) headers.delete(name);
  for (const [name, value] of outcome.setHeaders) headers.set(name, value);
  const res = Response.json({
    sub: outcome.identity.sub,
    email: headers.get("x-email"),
    path: u.pathname,
    route: matched.name,
  });
  for (const [name, value] of outcome.responseHeaders ?? []) res.headers.append(name, value);
  return res;
}

// One run only: the gateway is a Bun.serve stand-in for the proxy hook, not a Gatehouse listener.
describe("OIDC browser flow against oidc-provider", () => {
  const browser = new Browser(() => issuer);

  test("JSON clients without a session get 401, browsers a redirect with PKCE, state and nonce", async () => {
    const json = await fetch(`${app}/api`, { headers: { accept: "application/json" } });
    expect(json.status).toBe(401);
    const { res } = await browser.go(`${app}/app?x=1`, {}, false);
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get("location") as string);
    expect(to.origin).toBe(issuer);
    expect(to.searchParams.get("code_challenge_method")).toBe("S256");
    for (const p of ["state", "nonce", "code_challenge"])
      expect(to.searchParams.get(p)?.length).toBeGreaterThan(20);
    expect(to.searchParams.get("redirect_uri")).toBe(`${app}/oauth2/callback`);
  });

  test("login, callback and session: back on the page asked for, identity and claim header set", async () => {
    const { res, url } = await browser.login(`${app}/app?x=1`);
    expect(url).toBe(`${app}/app?x=1`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ sub: "alice", email: "alice@example.test", path: "/app" });
    const session = [...browser.jar.keys()].find(
      (k) => k.startsWith("gatehouse-session-") && !k.endsWith("-login"),
    );
    expect(session).toBeDefined();
    // The same session works on another path (and for JSON clients) without any provider round trip.
    const again = await browser.go(`${app}/other`, { headers: { accept: "application/json" } });
    expect(again.res.status).toBe(200);
    // And on another route (another Ingress) under the same policy: sessions are keyed by issuer,
    // client and cookie domain, not by route.
    const other = await browser.go(`${app}/reports/q3`, { headers: { accept: "application/json" } });
    expect(other.res.status).toBe(200);
    expect(await other.res.json()).toMatchObject({ sub: "alice", route: reports?.name });
    expect(reports?.name).not.toBe(route?.name);
  });

  test("a callback without the login cookie, or with another state, is refused", async () => {
    const bare = await fetch(`${app}/oauth2/callback?code=abc&state=xyz`);
    expect(bare.status).toBe(401);
    const other = new Browser(() => issuer);
    const { res } = await other.go(`${app}/app`, {}, false);
    const state = new URL(res.headers.get("location") as string).searchParams.get("state");
    const forged = await other.go(`${app}/oauth2/callback?code=abc&state=${state}x`, {}, false);
    expect(forged.res.status).toBe(401);
  });

  test("a forged or foreign session cookie is not accepted", async () => {
    const name = [...browser.jar.keys()].find((k) => k.startsWith("gatehouse-session-")) as string;
    const value = browser.jar.get(name) as string;
    const tampered = `${value.slice(0, -4)}AAAA`;
    const res = await fetch(`${app}/x`, {
      headers: { cookie: `${name}=${tampered}`, accept: "application/json" },
    });
    expect(res.status).toBe(401);
  });

  test("expired tokens are refreshed with the refresh token and a new cookie is set", async () => {
    const name = [...browser.jar.keys()].find((k) => k.startsWith("gatehouse-session-")) as string;
    const before = browser.jar.get(name);
    const grants = idp.grants();
    await Bun.sleep(1300);
    const { res } = await browser.go(`${app}/later`, { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { sub: string }).sub).toBe("alice");
    expect(idp.grants()).toBeGreaterThan(grants);
    expect(browser.jar.get(name)).not.toBe(before);
  });

  test("logout clears the session and goes through the provider's end_session_endpoint", async () => {
    const { res } = await browser.go(`${app}/oauth2/logout`, {}, false);
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get("location") as string);
    expect(`${to.origin}${to.pathname}`).toBe(`${issuer}/session/end`);
    expect(to.searchParams.get("id_token_hint")).toBeTruthy();
    const name = [...browser.jar.keys()].find((k) => k.startsWith("gatehouse-session-"));
    expect(name).toBeUndefined();
    const after = await browser.login(to.toString());
    expect(after.url).toBe(`${app}/bye`);
    const json = await browser.go(`${app}/app`, { headers: { accept: "application/json" } });
    expect(json.res.status).toBe(401);
  });
});
