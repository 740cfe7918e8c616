/**
 * The translation settings `serve` and `translate` share, from one parsed configuration, so the model,
 * problems and statuses `gatehouse translate` prints are the ones `serve` computes for the same flags.
 */
import type { ServeConfig } from "../config/config.ts";
import { DEFAULT_COMPRESSION_TYPES } from "../translate/policies/compression-spec.ts";
import type { TranslateOptions } from "../translate/translate.ts";

/** Flags of `serve` that change what translation produces; `translate` accepts exactly these. */
export const translationFlags = [
  "http-port",
  "https-port",
  "default-certificate",
  "error-pages-configmap",
  "default-backend-service",
  "ssl-redirect",
  "ingress-class",
  "ingress-controller",
  "watch-ingress-without-class",
  "allow-unenforced-annotations",
  "gateway-controller",
  "gateway-address-pool",
  "enable-ssl-passthrough",
  "global-allowed-response-headers",
  "global-auth-url",
  "global-auth-signin",
  "global-auth-response-headers",
  "compression",
  "compression-types",
  "compression-min-bytes",
  "gzip-level",
  "brotli-level",
  "zstd-level",
] as const;

type TranslationConfig = Pick<ServeConfig, (typeof translationFlags)[number]>;

/**
 * What `parseServeConfig` gives these flags when neither the command line nor the environment sets a
 * serve flag (a test holds the two equal). `translate` without flags uses it instead of loading
 * config.ts, whose zod schema of every serve flag was a tenth of its start.
 */
export const translationDefaults: TranslationConfig = {
  "http-port": 8080,
  "https-port": 8443,
  "default-certificate": undefined,
  "error-pages-configmap": undefined,
  "default-backend-service": undefined,
  "ssl-redirect": true,
  "ingress-class": "gatehouse",
  "ingress-controller": "gatehouse.dev/ingress-controller",
  "watch-ingress-without-class": false,
  "allow-unenforced-annotations": false,
  "gateway-controller": "gatehouse.dev/gateway-controller",
  "gateway-address-pool": undefined,
  "enable-ssl-passthrough": false,
  "global-allowed-response-headers": [],
  "global-auth-url": undefined,
  "global-auth-signin": undefined,
  "global-auth-response-headers": undefined,
  compression: [],
  "compression-types": [...DEFAULT_COMPRESSION_TYPES],
  "compression-min-bytes": 256,
  "gzip-level": 1,
  "brotli-level": 4,
  "zstd-level": 3,
};

export function translateOptionsOf(
  config: TranslationConfig,
  generatedCertificate: TranslateOptions["generatedCertificate"],
  nowMs: number,
): Partial<TranslateOptions> {
  return {
    httpPort: config["http-port"],
    httpsPort: config["https-port"],
    defaultCertificate: config["default-certificate"],
    errorPagesConfigMap: config["error-pages-configmap"],
    defaultBackendService: config["default-backend-service"],
    generatedCertificate,
    sslRedirect: config["ssl-redirect"],
    nowMs,
    ingressClass: config["ingress-class"],
    ingressController: config["ingress-controller"],
    watchIngressWithoutClass: config["watch-ingress-without-class"],
    allowUnenforcedAnnotations: config["allow-unenforced-annotations"],
    gatewayController: config["gateway-controller"],
    gatewayAddressPool: config["gateway-address-pool"],
    enableSslPassthrough: config["enable-ssl-passthrough"],
    allowedResponseHeaders: config["global-allowed-response-headers"],
    globalAuth: globalAuthOf(config),
    compression: {
      codings: config.compression,
      types: config["compression-types"],
      minBytes: config["compression-min-bytes"],
      gzipLevel: config["gzip-level"],
      brotliQuality: config["brotli-level"],
      zstdLevel: config["zstd-level"],
    },
  };
}

/** The global-auth flags as the annotations they stand for (undefined: no global authentication). */
function globalAuthOf(config: TranslationConfig): TranslateOptions["globalAuth"] {
  const url = config["global-auth-url"];
  if (url === undefined) return undefined;
  const signin = config["global-auth-signin"];
  const headers = config["global-auth-response-headers"];
  return {
    "auth-url": url,
    ...(signin !== undefined ? { "auth-signin": signin } : {}),
    ...(headers !== undefined ? { "auth-response-headers": headers } : {}),
  };
}
