/**
 * ingress-nginx's response bandwidth limit (read with the rate limits in its
 * internal/ingress/annotations/ratelimit, written as nginx `limit_rate Nk` and `limit_rate_after Nk`):
 * - `limit-rate: N` → each response body of the Ingress's paths goes to its client at most N KiB (N × 1024
 *   bytes) a second; 0 is no limit, as in nginx;
 * - `limit-rate-after: N` → the first N KiB of each body go at full speed first; alone (or with
 *   `limit-rate: "0"`) it limits nothing, as in nginx, and is reported (InvalidAnnotation) as a lone
 *   `mirror-host` is: configured and not done is never silent.
 * Values are whole numbers as ingress-nginx reads them (strconv.Atoi); where ingress-nginx quietly takes
 * its ConfigMap default for one it cannot read, and writes no directive for a negative one, Gatehouse
 * reports both as InvalidAnnotation and paces nothing on their account. These are not access controls
 * (the request-rate `limit-*` family is request-rate.ts): nothing fails closed.
 *
 * `limit-connections: N` (read by the same ingress-nginx parser, written as `limit_conn <zone> N` in each
 * location, the zone per Ingress keyed by `$binary_remote_addr`) is: at most N requests in flight at once
 * per client address on all the Ingress's paths (nginx counts connections whose request is being
 * processed in the location, so in HTTP/1.1 terms the same thing); one more gets 503, nginx's
 * `limit_conn_status` as ingress-nginx sets it by default. The client is client-address.ts's (the peer, or
 * what a trusted proxy's X-Forwarded-For names, as ingress-nginx's `$remote_addr` with forwarded headers
 * on). `0` is no limit. It is a guard: a value that is not a whole number refuses every request (503),
 * never opens. Clients in `limit-allowlist` (or `limit-whitelist`) are neither counted nor capped, as
 * ingress-nginx's allowlist exempts them from limit-connections too; a list that does not parse is
 * reported by request-rate.ts and exempts no one here (a cap is not opened by a typo).
 */
import type { ResponseBandwidth } from "../../../model/index.ts";
import { ingressConnectionZoneName } from "../../common/names.ts";
import { cidrList } from "../../policies/ratelimit-spec.ts";
import type { AnnotationFamily, AnnotationReader, RouteEdit } from "./route-edits.ts";

export const RESPONSE_BANDWIDTH_ANNOTATIONS = ["limit-rate", "limit-rate-after"] as const;

/** nginx's `k` suffix. */
const KIB = 1024;
/** Up to nine digits (about 1 TB, or 1 TB a second): far past any real limit, and exact in a double. */
const KIBIBYTES = /^\+?[0-9]{1,9}$/;

function kibibytes(r: AnnotationReader, name: string): number | undefined {
  const raw = r.raw(name);
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (!KIBIBYTES.test(v))
    return r.bad(name, raw, "must be a whole number of kilobytes (KiB) from 0 to 999999999");
  return Number(v) * KIB;
}

export const responseBandwidthFamily: AnnotationFamily = {
  names: RESPONSE_BANDWIDTH_ANNOTATIONS,
  read(r): RouteEdit | undefined {
    const rate = kibibytes(r, "limit-rate");
    const after = kibibytes(r, "limit-rate-after");
    if (rate === undefined || rate === 0) {
      // A refused limit-rate is reported already; an absent or "0" one leaves a lone limit-rate-after.
      const lone = rate === 0 || r.raw("limit-rate") === undefined;
      if (lone && after !== undefined && after > 0)
        r.bad(
          "limit-rate-after",
          r.raw("limit-rate-after") ?? "",
          "without a limit-rate above 0 it paces nothing",
        );
      return undefined;
    }
    const responseBandwidth: ResponseBandwidth = { bytesPerSecond: rate, fullSpeedBytes: after ?? 0 };
    return { responseBandwidth };
  },
};

/** ingress-nginx `limit-connections` (see above). */
export const clientConcurrencyFamily: AnnotationFamily = {
  names: ["limit-connections"],
  read(r): RouteEdit | undefined {
    const raw = r.raw("limit-connections");
    if (raw === undefined) return undefined;
    const v = raw.trim();
    let limit = 0;
    if (!/^\+?[0-9]{1,9}$/.test(v))
      r.bad(
        "limit-connections",
        raw,
        "must be a whole number (0: no limit): the Ingress's requests are refused (503, never open) until it is fixed",
      );
    else if (Number(v) === 0) return undefined;
    else limit = Number(v);
    const exemptCIDRs = allowlist(r);
    return {
      perRoute: (route) => ({
        ...route,
        clientConcurrency: {
          zone: ingressConnectionZoneName(route.source.namespace, route.source.name),
          limit,
          ...(exemptCIDRs.length > 0 ? { exemptCIDRs } : {}),
        },
      }),
    };
  },
};

/** `limit-allowlist` (the newer name wins over `limit-whitelist`) as CIDRs; [] when absent or unparsable. */
function allowlist(r: AnnotationReader): string[] {
  const raw = r.raw("limit-allowlist") ?? r.raw("limit-whitelist");
  if (raw === undefined) return [];
  const parsed = cidrList(
    raw
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
  return typeof parsed === "string" ? [] : parsed;
}
