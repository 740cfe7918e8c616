/**
 * RequestMirror (Gateway API) and ingress-nginx's `mirror-target`: a fire-and-forget copy of the request,
 * as edited by the filters before it, to one endpoint of another backend or to a URL; its answer is read
 * and dropped. It never delays or fails the main request (unlike nginx's mirror module, whose request
 * waits for its mirrors before the connection serves the next one).
 * The body is copied when it was read whole before forwarding (handler.ts reads it before the filters
 * run, as forward() would: a Content-Length up to --request-buffer-bytes, not to an h2c backend). A
 * bigger or chunked body is streamed to the backend as it arrives; teeing that stream would buffer it without bound whenever the
 * mirror is slower than the backend, so such a request is not mirrored: counted
 * (`skipped_streamed_body`) and logged at debug. Copies waiting for their answers are bounded for the
 * whole process (MAX_MIRROR_COPIES, MAX_MIRROR_BYTES), so slow mirrors hold a bounded amount of memory
 * whatever the number of routes, backends and configuration reloads; a copy over either is skipped
 * (`skipped_busy`).
 */
import type { Backend, RequestMirrorFilter } from "../../model/index.ts";
import { fillLocation, type LocationPart, type LocationVariable } from "../../model/location-template.ts";
import { mirrorTargetProblem, parseMirrorPath } from "../../model/mirror-target.ts";
import { logger } from "../../observability/logger.ts";
import { type FetchTLS, tlsOrigin } from "../backend-tls/options.ts";
import { normaliseHost } from "../match/host.ts";
import type { MirrorOutcome } from "../request/observer.ts";
import { parseRequestTarget } from "../request/request-target.ts";
import { type CompiledBackend, nextEndpoint } from "../table.ts";
import type { CompiledFilter, RequestContext } from "./filter-types.ts";

const log = logger.child({ component: "proxy", filter: "RequestMirror" });

/**
 * Copies in flight at most, in the whole process. One bound for all filters: a count per compiled filter
 * would multiply by routes × backends, and each configuration reload compiles new filters while the old
 * ones' copies are still waiting. A copy holds a socket and its Headers besides its body.
 */
export const MAX_MIRROR_COPIES = 256;
/**
 * Body bytes held by copies in flight at most, in the whole process: each may hold a body up to
 * --request-buffer-bytes (16 MiB at most), so the copy count alone would allow 4 GiB. 64 MiB still lets
 * a mirror that answers slowly take 256 bodies of 256 KiB, or 4 of the largest.
 */
export const MAX_MIRROR_BYTES = 64 * 1024 * 1024;

/** What copies in flight hold now, shared by every RequestMirror filter ever compiled. */
const held = { copies: 0, bytes: 0 };

/** Copies in flight and the body bytes they hold (for tests and debugging). */
export function mirrorsInFlight(): { readonly copies: number; readonly bytes: number } {
  return { copies: held.copies, bytes: held.bytes };
}

/** Where copies go, resolved once. */
interface Destination {
  /** The metric label: the backend id, or the target's `scheme://host:port`. */
  readonly label: string;
  /** The base URL of the next copy; undefined when there is none (a backend without endpoints). */
  base(): string | undefined;
  /** The Host sent when the filter names none; null: the request's. */
  readonly host: string | null;
  /** Path parts to fill; undefined: the request's path and query as they go upstream. */
  readonly path: readonly LocationPart[] | undefined;
  /** The path when it has no variable: the request's query is appended to it. */
  readonly literal: string | undefined;
  /** A TLS backend's settings (its `base` is then `https://…`). */
  readonly tls?: FetchTLS;
}

export function compileRequestMirror(
  f: RequestMirrorFilter,
  backends: ReadonlyMap<string, CompiledBackend>,
  models: Readonly<Record<string, Backend>>,
  warn: (msg: string) => void,
): CompiledFilter {
  const dest = destination(f, backends, models, warn);
  if (dest === undefined) return {};
  const share = Math.max(0, Math.min(100, f.percent)) / 100;
  const withBody = f.body !== false;
  const https = f.url?.scheme === "https";
  // The certificate is verified against the Host sent, when one is set (`https://10.0.0.1…` + mirror-host).
  const tls =
    dest.tls !== undefined
      ? { tls: dest.tls }
      : https && f.host !== undefined
        ? { tls: { serverName: hostName(f.host) } }
        : {};
  return {
    request: (ctx) => {
      if (share === 0 || (share < 1 && Math.random() >= share)) return undefined;
      const base = dest.base();
      if (base === undefined) return undefined;
      if (withBody && ctx.body === undefined && ctx.req.body !== null) {
        log.debug("request body streamed, not mirrored", { mirror: dest.label });
        return report(ctx, dest.label, "skipped_streamed_body");
      }
      const body = withBody ? (ctx.body ?? null) : null;
      const bytes = body === null ? 0 : body.byteLength;
      if (held.copies >= MAX_MIRROR_COPIES || held.bytes + bytes > MAX_MIRROR_BYTES) {
        log.debug("mirrors busy, copy skipped", { mirror: dest.label, ...held });
        return report(ctx, dest.label, "skipped_busy");
      }
      const headers = new Headers(ctx.headers);
      const host = f.host ?? dest.host ?? ctx.host;
      if (host !== null) headers.set("host", host);
      if (!withBody) {
        headers.delete("content-length");
        headers.delete("transfer-encoding");
      }
      let sent: Promise<Response>;
      try {
        sent = fetch(base + mirrorPath(dest, ctx), {
          method: ctx.req.method,
          headers,
          body,
          redirect: "manual",
          decompress: false,
          proxy: false,
          signal: AbortSignal.timeout(ctx.timeoutMs),
          ...tls,
        });
      } catch (err) {
        // Counted only once sent: a copy that never left must not hold a place for good.
        log.debug("mirror request failed", { mirror: dest.label, error: String(err) });
        return report(ctx, dest.label, "failed");
      }
      held.copies++;
      held.bytes += bytes;
      sent
        .then(
          (res) => {
            report(ctx, dest.label, "answered");
            return res.body?.cancel();
          },
          (err: unknown) => {
            report(ctx, dest.label, "failed");
            log.debug("mirror request failed", { mirror: dest.label, error: String(err) });
          },
        )
        .catch(() => {})
        .finally(() => {
          held.copies--;
          held.bytes -= bytes;
        });
      return undefined;
    },
  };
}

function destination(
  f: RequestMirrorFilter,
  backends: ReadonlyMap<string, CompiledBackend>,
  models: Readonly<Record<string, Backend>>,
  warn: (msg: string) => void,
): Destination | undefined {
  if (f.backendId !== undefined) {
    const backend = backends.get(f.backendId);
    if (backend === undefined || models[f.backendId] === undefined) {
      warn(`RequestMirror names unknown backend ${f.backendId}; nothing is mirrored`);
      return undefined;
    }
    const tls = backend.tls;
    return {
      label: f.backendId,
      base: () => {
        if (backend.bases.length === 0) return undefined;
        const base = nextEndpoint(backend);
        return tls === undefined ? base : tlsOrigin(base);
      },
      host: null,
      path: undefined,
      literal: undefined,
      ...(tls !== undefined ? { tls: tls.fetch } : {}),
    };
  }
  const t = f.url;
  const problem = t === undefined ? "names neither a backend nor a target" : mirrorTargetProblem(t);
  const path = t === undefined ? undefined : parseMirrorPath(t.path);
  if (t === undefined || problem !== undefined || path === undefined || !path.ok) {
    warn(`RequestMirror ${problem ?? ""}; nothing is mirrored`);
    return undefined;
  }
  const origin = `${t.scheme}://${t.hostname}:${t.port}`;
  const literal = path.parts.every((p) => "text" in p);
  return {
    label: origin,
    base: () => origin,
    host: t.hostname,
    path: t.path === "" ? undefined : path.parts,
    literal: t.path !== "" && literal ? t.path : undefined,
  };
}

/** The path and query of a copy (MirrorTarget.path says how; nginx's proxy_pass appends the query to a
 * URI without variables, and sends one with variables as filled). */
function mirrorPath(dest: Destination, ctx: RequestContext): string {
  const { path, literal } = dest;
  if (path === undefined) return ctx.path + ctx.query;
  if (literal !== undefined) {
    if (ctx.query === "") return literal;
    return literal.includes("?") ? `${literal}&${ctx.query.slice(1)}` : literal + ctx.query;
  }
  return fillLocation(path, (v) => variable(v, ctx));
}

function variable(v: LocationVariable, ctx: RequestContext): string {
  switch (v) {
    case "request_uri":
      return (parseRequestTarget(ctx.req.url)?.path ?? ctx.path) + ctx.query;
    case "uri":
      return ctx.path;
    case "args":
    case "query_string":
      return ctx.query.slice(1);
    case "is_args":
      return ctx.query === "" ? "" : "?";
    case "host":
      return normaliseHost(ctx.req.headers.get("host"));
    default:
      return ""; // parseMirrorPath admits no other
  }
}

/** A Host value without its port, for SNI. */
function hostName(host: string): string {
  const colon = host.lastIndexOf(":");
  return colon > 0 && !host.endsWith("]") ? host.slice(0, colon) : host;
}

function report(ctx: RequestContext, mirror: string, outcome: MirrorOutcome): undefined {
  ctx.observer?.mirrored?.(mirror, outcome);
  return undefined;
}
