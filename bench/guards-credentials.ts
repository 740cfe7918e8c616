/**
 * The basic-auth and API-key rows of the guards section (guards.ts): an Ingress with ingress-nginx's
 * `auth-type: basic` whose one user has a bcrypt hash of cost 10 (as `htpasswd -B` writes it), an
 * AuthPolicy with one API key, and a flood of wrong passwords (a new one per request, so none is cached
 * and each asks for a bcrypt verification) sent from this process while wrk measures a valid user.
 */

export const credentialHosts = {
  basic: "basic.bench.test",
  apiKey: "apikey.bench.test",
} as const;

const user = "bench-user";
const password = "correct horse battery staple";
const apiKey = "bench-key-0123456789abcdef";

export interface CredentialSetup {
  /** Folder documents: the Secrets, the Ingress with basic auth, the API-key AuthPolicy. */
  readonly docs: readonly unknown[];
  /** Ingresses to add (name, host, annotations), built by guards.ts's `ingress`. */
  readonly ingresses: readonly (readonly [string, string, Record<string, string>])[];
  readonly basicHeaders: Record<string, string>;
  readonly keyHeaders: Record<string, string>;
}

export async function credentialSetup(ns: string): Promise<CredentialSetup> {
  const hash = (await Bun.password.hash(password, { algorithm: "bcrypt", cost: 10 })).replace(
    /^\$2b\$/,
    "$2y$",
  );
  return {
    docs: [
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "staff", namespace: ns },
        stringData: { auth: `${user}:${hash}\n` },
      },
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "keys", namespace: ns },
        stringData: { bench: apiKey },
      },
      {
        apiVersion: "gatehouse.dev/v1alpha1",
        kind: "AuthPolicy",
        metadata: { name: "api-key", namespace: ns },
        spec: {
          targetRefs: [{ group: "networking.k8s.io", kind: "Ingress", name: "apikey" }],
          apiKeyAuth: { credentialRefs: [{ name: "keys" }] },
        },
      },
    ],
    ingresses: [
      [
        "basic",
        credentialHosts.basic,
        {
          "nginx.ingress.kubernetes.io/auth-type": "basic",
          "nginx.ingress.kubernetes.io/auth-secret": "staff",
        },
      ],
      ["apikey", credentialHosts.apiKey, {}],
    ],
    basicHeaders: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` },
    keyHeaders: { "x-api-key": apiKey },
  };
}

export interface Flood {
  /** Stops sending; resolves with how the flood's requests were answered (status → count). */
  stop(): Promise<Map<number, number>>;
}

/** `concurrency` loops, each sending a wrong password (never the same twice) until stopped. */
export function startFlood(url: string, host: string, concurrency: number): Flood {
  let running = true;
  let n = 0;
  const statuses = new Map<number, number>();
  const loop = async () => {
    while (running) {
      const auth = `Basic ${Buffer.from(`${user}:wrong-${n++}-${Math.random()}`).toString("base64")}`;
      try {
        const res = await fetch(url, { headers: { host, authorization: auth } });
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      } catch {
        statuses.set(0, (statuses.get(0) ?? 0) + 1);
      }
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return statuses;
    },
  };
}

/** `401 ×n, 503 ×m` for a flood's answers. */
export function floodSummary(statuses: ReadonlyMap<number, number>): string {
  return (
    [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([s, c]) => `${s === 0 ? "error" : s} ×${c}`)
      .join(", ") || "none"
  );
}
