/**
 * What every listener of a server shares (ProxySettings) and one listener's live state: the contract
 * between the listeners that own them and every request path that reads them (the Bun.serve app, the
 * raw front, HTTP/2), kept apart so that none of those has to import another.
 */

import type { EdgeGuards } from "./request/guards.ts";
import type { RequestObserver } from "./request/observer.ts";
import type { ListenerTable } from "./table.ts";

/** Settings shared by every listener of a server. */
export interface ProxySettings {
  readonly defaultUpstreamTimeoutMs: number;
  readonly serverHeader: string;
  /** Bun's `idleTimeout` of the listeners, seconds; it also runs while a request waits for us. */
  readonly idleTimeoutSeconds: number;
  /** Authentication / rate limiting engines for routes that ask for them. */
  readonly guards?: EdgeGuards;
  /** Metrics and access log; absent in tests that do not need them. */
  readonly observer?: RequestObserver;
}

/** A listener's live state: `table` is replaced by one assignment on reload. */
export interface ListenerState {
  table: ListenerTable;
  /** The port actually bound (differs from the model only when the model says 0). */
  boundPort: number;
  readonly settings: ProxySettings;
}
