/** What the request path gets back from the enforcer, and what it passes in. */
import type { Identity } from "./identity.ts";
import type { AuthFailureReason } from "./responses.ts";

/** The parts of the request URL the proxy has already parsed (no `new URL` per request). */
export interface RequestURL {
  /** Normalised path, no query. */
  readonly path: string;
  /** Raw query string without `?` ("" when none). */
  readonly query: string;
  /** Host header value (may carry a port). */
  readonly host: string;
  /** Scheme the client used. */
  readonly scheme: "http" | "https";
}

export type AuthOutcome =
  | {
      readonly ok: true;
      /** Frozen; the same object for every request with the same token while it is cached. */
      readonly identity: Identity;
      /** Delete these request headers first (every `claimToHeaders` name, always, present or not)… */
      readonly removeHeaders: readonly string[];
      /** …then set these on the request sent upstream. */
      readonly setHeaders: readonly (readonly [string, string])[];
      /** Add these to the response sent to the client (a refreshed session cookie). */
      readonly responseHeaders?: readonly (readonly [string, string])[];
      /**
       * The query to send upstream instead of the client's, with its `?` ("" for none): an API key read
       * from a query parameter, taken out (`sanitize`). Undefined: the client's query, unchanged.
       */
      readonly query?: string;
    }
  | {
      readonly ok: false;
      /** Send this instead of forwarding: 401, 403, or a 302 to the provider / back from the callback. */
      readonly response: Response;
      readonly reason: AuthFailureReason | "redirect";
    };
