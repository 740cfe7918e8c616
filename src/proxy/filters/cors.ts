/**
 * Gateway API HTTPCORSFilter. A preflight (OPTIONS with Origin and Access-Control-Request-Method) is
 * answered here with 204 and never reaches the upstream; it carries the CORS headers only when the
 * origin is allowed. Other requests from an allowed origin get Allow-Origin, Allow-Credentials and
 * Expose-Headers on their response. With credentials, `*` may not be sent literally, so the request's
 * origin, method and headers are echoed instead (Fetch standard §3.2.5).
 *
 * The `IngressNginx` style is ingress-nginx's `enable-cors` instead (the model's CORSFilter says how it
 * differs). A preflight from a foreign origin is still answered here, bare: request/guards.ts lets every
 * preflight of a CORS route skip authentication because this filter answers it.
 */
import type { CORSFilter } from "../../model/index.ts";
import type { CompiledFilter } from "./filter-types.ts";

export function compileCORS(f: CORSFilter): CompiledFilter {
  const nginx = f.style === "IngressNginx";
  const anyOrigin = f.allowOrigins.includes("*");
  const labels = nginx ? ONE_LABEL : HOST_LABELS;
  const origins = f.allowOrigins.filter((o) => o !== "*").map((o) => originMatcher(o, labels));
  const allowed = (origin: string) => anyOrigin || origins.some((m) => m(origin));
  const anyMethod = f.allowMethods.includes("*");
  const methods = f.allowMethods.join(", ");
  const anyHeader = f.allowHeaders.includes("*");
  const allowHeaders = f.allowHeaders.join(", ");
  const expose = f.exposeHeaders.join(", ");
  const credentials = f.allowCredentials;
  const maxAge = String(f.maxAgeSeconds);

  const decorate = (origin: string | null, headers: Headers) => {
    if (anyOrigin && (nginx || !credentials)) headers.set("access-control-allow-origin", "*");
    else if (origin !== null) {
      headers.set("access-control-allow-origin", origin);
      const vary = headers.get("vary");
      if (vary === null) headers.set("vary", "Origin");
      else if (!/\borigin\b/i.test(vary)) headers.append("vary", "Origin");
    }
    if (credentials) headers.set("access-control-allow-credentials", "true");
    if (expose !== "") headers.set("access-control-expose-headers", expose);
  };

  /** ingress-nginx sends the whole set on every answer to an allowed origin, preflight or not. */
  const decorateAll = (origin: string | null, headers: Headers) => {
    decorate(origin, headers);
    if (methods !== "") headers.set("access-control-allow-methods", methods);
    if (allowHeaders !== "") headers.set("access-control-allow-headers", allowHeaders);
    headers.set("access-control-max-age", maxAge);
  };

  if (nginx) {
    /** Without an Origin only `*` allows (ingress-nginx then answers every request and OPTIONS). */
    const admits = (origin: string | null) => (origin === null ? anyOrigin : allowed(origin));
    return {
      request: (ctx) => {
        const h = ctx.req.headers;
        if (ctx.req.method !== "OPTIONS") return undefined;
        const origin = h.get("origin");
        if (admits(origin)) {
          const res = new Response(null, { status: 204 });
          decorateAll(origin, res.headers);
          return res;
        }
        if (origin !== null && h.has("access-control-request-method"))
          return new Response(null, { status: 204 });
        return undefined;
      },
      response: (req, headers) => {
        const origin = req.headers.get("origin");
        if (admits(origin)) decorateAll(origin, headers);
      },
    };
  }

  return {
    request: (ctx) => {
      const h = ctx.req.headers;
      if (ctx.req.method !== "OPTIONS") return undefined;
      const origin = h.get("origin");
      const wanted = h.get("access-control-request-method");
      if (origin === null || wanted === null) return undefined;
      const res = new Response(null, { status: 204 });
      if (!allowed(origin)) return res;
      const out = res.headers;
      decorate(origin, out);
      const m = anyMethod ? (credentials ? wanted : "*") : methods;
      if (m !== "") out.set("access-control-allow-methods", m);
      const wantedHeaders = h.get("access-control-request-headers");
      const ah = anyHeader ? (credentials ? (wantedHeaders ?? "") : "*") : allowHeaders;
      if (ah !== "") out.set("access-control-allow-headers", ah);
      out.set("access-control-max-age", maxAge);
      return res;
    },
    response: (req, headers) => {
      const origin = req.headers.get("origin");
      if (origin !== null && allowed(origin)) decorate(origin, headers);
    },
  };
}

/** What a `*` in an origin pattern may stand for: the Gateway API's one or more host labels… */
const HOST_LABELS = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*$/;
/** …or ingress-nginx's exactly one (its `[A-Za-z0-9\-]+`). */
const ONE_LABEL = /^[a-z0-9-]+$/;

/** `https://*.bar.com` matches `labels` in place of `*`; otherwise a case-insensitive equal. */
function originMatcher(pattern: string, labels: RegExp): (origin: string) => boolean {
  const p = pattern.toLowerCase();
  const star = p.indexOf("*");
  if (star < 0) return (o) => o.toLowerCase() === p;
  const head = p.slice(0, star);
  const tail = p.slice(star + 1);
  return (o) => {
    const l = o.toLowerCase();
    if (l.length <= head.length + tail.length || !l.startsWith(head) || !l.endsWith(tail)) return false;
    return labels.test(l.slice(head.length, l.length - tail.length));
  };
}
