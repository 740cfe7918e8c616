/**
 * `satisfy: Any` (model `RouteAuth.satisfy`): a client the route's allow lists admit is served without
 * credentials. It still gets what any admitted request gets: the headers authentication would write are
 * removed (claim headers, the user and key name headers, `Authorization` on a basic route as ingress-nginx
 * clears it, key headers with `sanitize`), so a client inside the list cannot hand the backend a forged
 * identity. The outcome is made once per `RouteAuth` and shared, frozen, by every such request.
 */
import type { RouteAuth } from "../model/index.ts";
import { credentialHeaders, withoutParam } from "./credentials/credential-check.ts";
import { type Identity, identityFromClaims } from "./identity.ts";
import type { AuthOutcome } from "./outcome.ts";

type Granted = AuthOutcome & { readonly ok: true };

/** The identity of a request the lists let in: no subject, no claims. */
const ADDRESS: Identity = identityFromClaims({}, "address");

const granted = new WeakMap<RouteAuth, Granted>();

/**
 * The outcome for a request of `auth`'s route let in by its client address; `query` (raw, no `?`) loses
 * the API-key parameters when the route sanitizes them, as a checked key's request would.
 */
export function addressGrant(auth: RouteAuth, query: string): Granted {
  let outcome = granted.get(auth);
  if (outcome === undefined) {
    const extra = credentialHeaders(auth, ADDRESS);
    outcome = Object.freeze({
      ok: true as const,
      identity: ADDRESS,
      // The names forward authentication would set too: nginx clears them when the service is not asked.
      removeHeaders: Object.freeze([
        ...auth.claimToHeaders.map((c) => c.header),
        ...extra.remove,
        ...(auth.external?.responseHeaders ?? []),
      ]),
      setHeaders: Object.freeze([]),
    });
    granted.set(auth, outcome);
  }
  const keys = auth.apiKeys;
  if (keys === undefined || !keys.sanitize || query === "") return outcome;
  const params = keys.sources.flatMap((s) => (s.type === "QueryParameter" ? [s.name] : []));
  if (params.length === 0) return outcome;
  const kept = withoutParam(query, params);
  return kept === `?${query}` ? outcome : { ...outcome, query: kept };
}
