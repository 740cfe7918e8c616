/**
 * Response compression settings: the gateway's (the `--compression*` flags, named after ingress-nginx's
 * ConfigMap keys `use-gzip`/`enable-brotli`, `gzip-types`, `gzip-min-length`, `gzip-level`,
 * `brotli-level`, with its defaults) and a BackendTrafficPolicy's `compression` (Envoy Gateway's list
 * of `{ type: Gzip | Brotli | Zstd, gzip: { compressionLevel }, brotli: { quality }, zstd: {
 * compressionLevel }, minContentLength }`), which overrides the gateway's for its Services: the codings
 * and what it sets, the rest (media types, what it leaves out) from the flags. `compression: []` turns
 * compression off for those Services. Envoy Gateway's tuning fields (window bits, memory level,
 * strategies, chunk sizes) are refused by name: a policy is applied as written or not at all.
 */
import type { ContentCoding, ResponseCompression, SourceRef } from "../../model/index.ts";

/** The gateway's defaults (flags), each policy's base; `codings` empty: compression is off by default. */
export type CompressionDefaults = Omit<ResponseCompression, "source">;

/** ingress-nginx's `gzip-types` (and `brotli-types`) default list. */
export const DEFAULT_COMPRESSION_TYPES: readonly string[] = [
  "application/atom+xml",
  "application/javascript",
  "application/x-javascript",
  "application/json",
  "application/rss+xml",
  "application/vnd.ms-fontobject",
  "application/x-font-ttf",
  "application/x-web-app-manifest+json",
  "application/xhtml+xml",
  "application/xml",
  "font/opentype",
  "image/svg+xml",
  "image/x-icon",
  "text/css",
  "text/html",
  "text/javascript",
  "text/plain",
  "text/x-component",
];

/** ingress-nginx's defaults: gzip-min-length 256, gzip-level 1, brotli-level 4; zstd at its own default 3. */
export const compressionDefaults: CompressionDefaults = {
  codings: [],
  types: DEFAULT_COMPRESSION_TYPES,
  minBytes: 256,
  gzipLevel: 1,
  brotliQuality: 4,
  zstdLevel: 3,
};

/** Where the flags' compression comes from in the model (logs, `/debug/model`). */
export const COMPRESSION_FLAGS_SOURCE: SourceRef = {
  kind: "Gatehouse",
  namespace: "",
  name: "--compression",
};

/** What a policy's `compression` sets; `codings` empty: off. Unset fields take the gateway's. */
export interface PolicyCompression {
  readonly codings: readonly ContentCoding[];
  readonly minBytes?: number;
  readonly gzipLevel?: number;
  readonly brotliQuality?: number;
  readonly zstdLevel?: number;
}

/** The compression a backend gets: the policy's over the defaults, or the defaults alone (undefined: none). */
export function effectiveCompression(
  defaults: CompressionDefaults,
  policy: { readonly settings: PolicyCompression; readonly source: SourceRef } | undefined,
): ResponseCompression | undefined {
  if (policy === undefined)
    return defaults.codings.length === 0 ? undefined : { source: COMPRESSION_FLAGS_SOURCE, ...defaults };
  const p = policy.settings;
  if (p.codings.length === 0) return undefined;
  return {
    source: policy.source,
    codings: p.codings,
    types: defaults.types,
    minBytes: p.minBytes ?? defaults.minBytes,
    gzipLevel: p.gzipLevel ?? defaults.gzipLevel,
    brotliQuality: p.brotliQuality ?? defaults.brotliQuality,
    zstdLevel: p.zstdLevel ?? defaults.zstdLevel,
  };
}

const CODINGS: Readonly<Record<string, ContentCoding>> = { Gzip: "gzip", Brotli: "br", Zstd: "zstd" };
/** Per type: its settings object, the one field read there, its range, and the tuning fields refused. */
const TUNING: Readonly<
  Record<string, { key: string; field: string; min: number; max: number; refused: readonly string[] }>
> = {
  Gzip: {
    key: "gzip",
    field: "compressionLevel",
    min: 1,
    max: 9,
    refused: ["compressionStrategy", "memoryLevel", "windowBits", "chunkSize"],
  },
  Brotli: {
    key: "brotli",
    field: "quality",
    min: 0,
    max: 11,
    refused: ["encoderMode", "windowBits", "inputBlockBits", "chunkSize", "disableLiteralContextModeling"],
  },
  Zstd: {
    key: "zstd",
    field: "compressionLevel",
    min: 1,
    max: 22,
    refused: ["enableChecksum", "strategy", "chunkSize"],
  },
};

/** `spec.compression` read, or why it cannot be applied (one message naming the field). */
export function parseCompressionSpec(value: unknown): PolicyCompression | string {
  if (!Array.isArray(value)) return "spec.compression: must be a list of { type: Gzip | Brotli | Zstd }";
  if (value.length > 3) return "spec.compression: at most 3 entries (one per type)";
  const codings: ContentCoding[] = [];
  const levels: Record<string, number> = {};
  let minBytes: number | undefined;
  for (const [i, entry] of value.entries()) {
    const at = `spec.compression[${i}]`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry))
      return `${at}: must be an object`;
    const e = entry as Record<string, unknown>;
    const type = e.type;
    const coding = typeof type === "string" ? CODINGS[type] : undefined;
    if (coding === undefined) return `${at}.type: must be Gzip, Brotli or Zstd, got ${JSON.stringify(type)}`;
    if (codings.includes(coding)) return `${at}.type: ${type} is listed twice`;
    codings.push(coding);
    const tuning = TUNING[type as string] as (typeof TUNING)[string];
    for (const key of Object.keys(e)) {
      if (key === "type" || key === "minContentLength" || key === tuning.key) continue;
      if (key === "gzip" || key === "brotli" || key === "zstd")
        return `${at}.${key}: only allowed when the type is ${key === "gzip" ? "Gzip" : key === "brotli" ? "Brotli" : "Zstd"}`;
      return `${at}.${key}: unknown field`;
    }
    const own = e[tuning.key];
    if (own !== undefined && own !== null) {
      if (typeof own !== "object" || Array.isArray(own)) return `${at}.${tuning.key}: must be an object`;
      for (const [key, v] of Object.entries(own as Record<string, unknown>)) {
        const where = `${at}.${tuning.key}.${key}`;
        if (tuning.refused.includes(key)) return `${where}: is not implemented (the level is)`;
        if (key !== tuning.field) return `${where}: unknown field`;
        if (typeof v !== "number" || !Number.isInteger(v) || v < tuning.min || v > tuning.max)
          return `${where}: must be an integer from ${tuning.min} to ${tuning.max}, got ${JSON.stringify(v)}`;
        levels[tuning.key] = v;
      }
    }
    if (e.minContentLength !== undefined) {
      const n = quantityBytes(e.minContentLength);
      if (n === undefined)
        return `${at}.minContentLength: must be a size in bytes (e.g. 256, 1Ki), got ${JSON.stringify(e.minContentLength)}`;
      if (minBytes !== undefined && n !== minBytes)
        return `${at}.minContentLength: differs from an earlier entry's; Gatehouse applies one minimum to every type`;
      minBytes = n;
    }
  }
  return {
    codings,
    ...(minBytes !== undefined ? { minBytes } : {}),
    ...(levels.gzip !== undefined ? { gzipLevel: levels.gzip } : {}),
    ...(levels.brotli !== undefined ? { brotliQuality: levels.brotli } : {}),
    ...(levels.zstd !== undefined ? { zstdLevel: levels.zstd } : {}),
  };
}

const UNITS: Readonly<Record<string, number>> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
};

/** A Kubernetes quantity of bytes as Envoy Gateway's pattern allows (`256`, `1Ki`, `2k`), up to 1 GiB. */
function quantityBytes(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isInteger(v) && v >= 0 && v <= 1024 ** 3 ? v : undefined;
  if (typeof v !== "string") return undefined;
  const m = /^([0-9]{1,10})(Ki|Mi|Gi|k|M|G)?$/.exec(v);
  if (m === null) return undefined;
  const n = Number(m[1]) * (UNITS[m[2] ?? ""] as number);
  return n <= 1024 ** 3 ? n : undefined;
}
