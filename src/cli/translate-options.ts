/**
 * The translation settings `serve` and `translate` share, from one parsed configuration, so the model,
 * problems and statuses `gatehouse translate` prints are the ones `serve` computes for the same flags.
 */
import type { ServeConfig } from "../config/config.ts";
import type { TranslateOptions } from "../translate/translate.ts";

/** Flags of `serve` that change what translation produces; `translate` accepts exactly these. */
export const translationFlags = [
  "http-port",
  "https-port",
  "default-certificate",
  "ssl-redirect",
  "ingress-class",
  "ingress-controller",
  "watch-ingress-without-class",
  "allow-unenforced-annotations",
  "gateway-controller",
  "gateway-address-pool",
] as const;

export function translateOptionsOf(
  config: ServeConfig,
  generatedCertificate: TranslateOptions["generatedCertificate"],
  nowMs: number,
): Partial<TranslateOptions> {
  return {
    httpPort: config["http-port"],
    httpsPort: config["https-port"],
    defaultCertificate: config["default-certificate"],
    generatedCertificate,
    sslRedirect: config["ssl-redirect"],
    nowMs,
    ingressClass: config["ingress-class"],
    ingressController: config["ingress-controller"],
    watchIngressWithoutClass: config["watch-ingress-without-class"],
    allowUnenforcedAnnotations: config["allow-unenforced-annotations"],
    gatewayController: config["gateway-controller"],
    gatewayAddressPool: config["gateway-address-pool"],
  };
}
