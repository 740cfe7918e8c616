/**
 * A real OpenID provider for OIDC tests (the `oidc-provider` package, run by Bun on loopback through
 * node:http) with one client, `gatehouse`/`s3cret`, whose redirect URIs are the app's `/oauth2/callback`
 * and `/bye`; tokens live 1 s by default so a test sees a refresh without waiting long. And a browser: one cookie jar, redirects followed,
 * the provider's login and consent forms submitted.
 */
import { createServer } from "node:http";
import Provider from "oidc-provider";

export interface TestIdP {
  readonly issuer: string;
  /** Authorization codes and refresh tokens granted so far. */
  grants(): number;
  close(): void;
}

/**
 * Listens first (the issuer names its port), then serves the provider. `app`: the relying party's origin;
 * `tokenSeconds`: how long ID and access tokens live (a session is verified again after that).
 */
export async function startIdP(app: () => string, tokenSeconds = 1): Promise<TestIdP> {
  const idp = createServer();
  await new Promise<void>((resolve) => idp.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(idp.address() as { port: number }).port}`;
  let grants = 0;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: "gatehouse",
        client_secret: "s3cret",
        redirect_uris: [`${app()}/oauth2/callback`],
        post_logout_redirect_uris: [`${app()}/bye`],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    ],
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    issueRefreshToken: async () => true,
    // Claims go into the ID token (Gatehouse reads the ID token only, never userinfo).
    conformIdTokenClaims: false,
    ttl: {
      IdToken: tokenSeconds,
      AccessToken: tokenSeconds,
      RefreshToken: 600,
      Session: 600,
      Grant: 600,
      Interaction: 600,
    },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, email: `${id}@example.test` }),
    }),
    claims: { email: ["email"], openid: ["sub"] },
  });
  provider.on("grant.success", () => grants++);
  idp.on("request", provider.callback());
  return { issuer, grants: () => grants, close: () => idp.close() };
}

/** Ingress `name` in `default`, any host, one Prefix `path` to Service `web` port 80. */
export function webIngressYaml(name: string, path: string): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: default }
spec:
  ingressClassName: gatehouse
  rules:
    - http:
        paths: [{ path: ${path}, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }]
`;
}

/** An AuthPolicy `login` (OIDC against `issuer`, email → X-Email) on Ingress `target`, with its Secret. */
export function oidcPolicyYaml(issuer: string, app: string, targets: readonly string[]): string {
  const refs = targets.map((t) => `{ group: networking.k8s.io, kind: Ingress, name: ${t} }`).join(", ");
  return `apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: login, namespace: default }
spec:
  targetRefs: [${refs}]
  oidc:
    issuer: "${issuer}"
    clientID: gatehouse
    clientSecretRef: { name: oidc }
    sessionKeyRef: { name: oidc }
    redirectURL: "${app}/oauth2/callback"
    postLogoutRedirectURL: "${app}/bye"
    scopes: [email]
  claimToHeaders: [{ claim: email, header: X-Email }]
---
apiVersion: v1
kind: Secret
metadata: { name: oidc, namespace: default }
data: { client-secret: ${btoa("s3cret")}, session-key: ${Buffer.alloc(32, 7).toString("base64")} }
`;
}

/** A browser: one cookie jar (cookies are shared across ports of a host, as browsers do), redirects followed. */
export class Browser {
  readonly jar = new Map<string, string>();
  /** `issuer`: the provider's origin, asked when a login starts (tests make browsers before the provider). */
  constructor(private readonly issuer: () => string) {}

  async go(url: string, init: RequestInit = {}, follow = true): Promise<{ res: Response; url: string }> {
    let current = url;
    let options = init;
    for (let hop = 0; hop < 15; hop++) {
      const headers = new Headers(options.headers);
      if (this.jar.size > 0) headers.set("cookie", [...this.jar].map(([k, v]) => `${k}=${v}`).join("; "));
      const res = await fetch(current, { ...options, headers, redirect: "manual" });
      for (const c of res.headers.getSetCookie()) {
        const [pair = "", ...attrs] = c.split(";");
        const eq = pair.indexOf("=");
        const name = pair.slice(0, eq).trim();
        const gone = attrs.some((a) => /max-age=0\b/i.test(a) || /expires=Thu, 01 Jan 1970/i.test(a));
        if (gone || pair.slice(eq + 1) === "") this.jar.delete(name);
        else this.jar.set(name, pair.slice(eq + 1));
      }
      const location = res.headers.get("location");
      if (!follow || location === null || res.status < 300 || res.status > 399) return { res, url: current };
      current = new URL(location, current).toString();
      options = {};
    }
    throw new Error("too many redirects");
  }

  /** Submit the provider's interaction form (login, then consent) until we leave the provider. */
  async login(start: string): Promise<{ res: Response; url: string }> {
    let page = await this.go(start);
    for (let i = 0; i < 4 && page.url.startsWith(this.issuer()); i++) {
      const html = await page.res.text();
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
      if (!action) throw new Error(`no form on ${page.url}: ${html.slice(0, 200)}`);
      const fields = new URLSearchParams();
      for (const m of html.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g))
        fields.set(m[1] as string, m[2] as string);
      if (html.includes('name="login"')) {
        fields.set("login", "alice");
        fields.set("password", "pw");
      }
      page = await this.go(new URL(action, page.url).toString(), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: fields.toString(),
      });
    }
    return page;
  }

  /** The session cookie's name (not the login flow's). */
  sessionCookie(): string | undefined {
    return [...this.jar.keys()].find((k) => k.startsWith("gatehouse-session-") && !k.endsWith("-login"));
  }
}
