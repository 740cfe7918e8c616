/**
 * Request header fields whose name contains `_` are dropped before anything reads them (routing's
 * header matches, guards, forwarding), as nginx does by default (`underscores_in_headers off` with
 * `ignore_invalid_headers on`; ingress-nginx's `enable-underscores-in-headers: false`), unless the
 * gateway is told to keep them (`--underscores-in-headers`). CGI-style environments (WSGI, Rack, PHP)
 * give `_` and `-` one name, so a client's `X_Forwarded_For` would pass for the gateway's
 * `X-Forwarded-For`, and a `Transfer_Encoding` could frame a request at a backend in a way the gateway
 * never checked. The raw front drops them while it parses a head (raw-front/http1/request-head.ts);
 * requests that come through Bun.serve are cleaned here. Never silently: each drop is counted
 * (`gatehouse_request_header_fields_dropped_total`) and logged at debug.
 */
import { logger } from "../../observability/logger.ts";
import type { ListenerState } from "../settings.ts";

const log = logger.child({ component: "proxy" });

/** Deletes every field of `h` whose name has a `_`; returns their names, or undefined when none had. */
export function dropUnderscoredFields(h: Headers): string[] | undefined {
  let names: string[] | undefined;
  for (const name of h.keys()) {
    if (!name.includes("_")) continue;
    if (names === undefined) names = [name];
    else names.push(name);
  }
  // Deleted once the walk is over: deleting during it would skip names.
  if (names !== undefined) for (const name of names) h.delete(name);
  return names;
}

/** Tells the operator about fields dropped from one request: the metric, and a debug line naming them. */
export function reportDropped(state: ListenerState, names: readonly string[]): void {
  const listener = state.table.name;
  state.settings.observer?.headerFieldsDropped?.(listener, names.length);
  // Client text, so a few names, shortened: enough to see which backend lost which field.
  log.debug("request header fields with _ in their name dropped (--underscores-in-headers)", {
    listener,
    fields: names.slice(0, 8).map((n) => n.slice(0, 64)),
  });
}
