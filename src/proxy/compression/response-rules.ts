/**
 * Which responses are compressed and what their head then says, shared by both fronts (the raw front's
 * relay and the Bun.serve path), decided on the upstream's response as it came (before the route's
 * response filters; docs/compression.md). A response qualifies, whatever the client accepts, when it
 * has a body, is not a 206, carries no Content-Encoding, Content-Range or `Cache-Control: no-transform`,
 * has one of the configured media types and no Content-Length below the minimum: it then varies on
 * Accept-Encoding (`Vary` says so, compressed or not, as nginx's `gzip_vary`). It is compressed when
 * the request also allows it: not HEAD, no Range, a coding the client accepts (accept-encoding.ts).
 * Compressed, its head loses Content-Length and Accept-Ranges and a strong ETag becomes weak, as nginx's
 * gzip filter does, since the bytes are no longer those the ETag named.
 */
import type { ContentCoding, ResponseCompression } from "../../model/index.ts";
import { chooseCoding } from "./accept-encoding.ts";
import type { CoderSettings } from "./encoder.ts";

/** A backend's compression, ready for the request path (compiled once per model object). */
export interface CompiledCompression extends CoderSettings {
  readonly codings: readonly ContentCoding[];
  readonly anyType: boolean;
  readonly types: ReadonlySet<string>;
  /** `text/*` style entries, as their `text/` prefix. */
  readonly typePrefixes: readonly string[];
  readonly minBytes: number;
}

const compiled = new WeakMap<ResponseCompression, CompiledCompression>();

/** `c` compiled; backends sharing one model object (the flags') share one compiled object. */
export function compileCompression(c: ResponseCompression): CompiledCompression {
  let out = compiled.get(c);
  if (out === undefined) {
    const exact = c.types.filter((t) => t !== "*" && !t.endsWith("/*"));
    out = {
      codings: c.codings,
      anyType: c.types.includes("*") || c.types.includes("*/*"),
      types: new Set(exact),
      typePrefixes: c.types.filter((t) => t.endsWith("/*") && t !== "*/*").map((t) => t.slice(0, -1)),
      minBytes: c.minBytes,
      gzipLevel: c.gzipLevel,
      brotliQuality: c.brotliQuality,
      zstdLevel: c.zstdLevel,
    };
    compiled.set(c, out);
  }
  return out;
}

/** Reads a response field by lower-case name (every line of it joined with ", "), null when absent. */
export interface ResponseFields {
  get(name: string): string | null;
}

/**
 * Whether a response with a body may be compressed under `c`, whatever the client accepts (and so
 * varies on Accept-Encoding). `contentLength` is -1 when the body's length is not known ahead.
 */
export function compressibleResponse(
  c: CompiledCompression,
  status: number,
  contentLength: number,
  fields: ResponseFields,
): boolean {
  if (status === 206 || status === 204 || status === 304 || status < 200) return false;
  if (contentLength >= 0 && contentLength < c.minBytes) return false;
  if (fields.get("content-encoding") !== null || fields.get("content-range") !== null) return false;
  const cacheControl = fields.get("cache-control");
  if (cacheControl !== null && hasToken(cacheControl, "no-transform")) return false;
  return typeMatches(c, fields.get("content-type"));
}

/** The coding the request allows for a compressible response, or undefined (HEAD, Range, not accepted). */
export function requestedCoding(
  c: CompiledCompression,
  method: string,
  acceptEncoding: string | null,
  hasRange: boolean,
): ContentCoding | undefined {
  if (method === "HEAD" || hasRange) return undefined;
  return chooseCoding(acceptEncoding, c.codings);
}

/** gRPC frames its own messages (and its own compression): never recoded, even with `*`. */
const GRPC = "application/grpc";

function typeMatches(c: CompiledCompression, contentType: string | null): boolean {
  if (contentType === null) return false;
  const semi = contentType.indexOf(";");
  const type = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (type === "" || type.startsWith(GRPC)) return false;
  if (c.anyType || c.types.has(type)) return true;
  for (const p of c.typePrefixes) if (type.startsWith(p)) return true;
  return false;
}

/** Whether the comma-separated `list` names `token` (case-insensitive, directive arguments ignored). */
function hasToken(list: string, token: string): boolean {
  for (const part of list.split(",")) {
    const eq = part.indexOf("=");
    if ((eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase() === token) return true;
  }
  return false;
}

/** `Vary` with Accept-Encoding added, or undefined when it already covers it (it lists it, or is `*`). */
export function varyWithAcceptEncoding(vary: string | null): string | undefined {
  if (vary === null || vary.trim() === "") return "Accept-Encoding";
  if (hasToken(vary, "accept-encoding") || hasToken(vary, "*")) return undefined;
  return `${vary}, Accept-Encoding`;
}

/** A strong ETag made weak (`"x"` → `W/"x"`); weak ones as they are. */
export function weakETag(etag: string): string {
  return etag.startsWith("W/") ? etag : `W/${etag}`;
}

/**
 * A compressible response's head fields on a Headers object: Vary always, and when `coding` is set
 * Content-Encoding, no Content-Length or Accept-Ranges, a weak ETag.
 */
export function editEncodedFields(h: Headers, coding: ContentCoding | undefined): void {
  const vary = varyWithAcceptEncoding(h.get("vary"));
  if (vary !== undefined) h.set("vary", vary);
  if (coding === undefined) return;
  h.set("content-encoding", coding);
  h.delete("content-length");
  h.delete("accept-ranges");
  const etag = h.get("etag");
  if (etag !== null) h.set("etag", weakETag(etag));
}
