/**
 * The honoured annotation families, in the order their edits apply (a later family's filters run after an
 * earlier one's), and each Ingress's edits kept per Ingress object: an unchanged Ingress is the same
 * object between translates (as for ingress/memo.ts), so its annotations are read once.
 */
import type { SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { keptPerObject } from "../../common/kept-check.ts";
import { modsecurityFamily } from "../access/modsecurity.ts";
import { sourceRangeFamily } from "../access/source-ranges.ts";
import { balancingFamily } from "../balancing/balancing-annotations.ts";
import { corsFamily } from "./cors.ts";
import { mirrorFamily } from "./mirror.ts";
import { proxyTimeouts } from "./proxy-timeouts.ts";
import { redirectFamily } from "./redirects.ts";
import { clientConcurrencyFamily, responseBandwidthFamily } from "./response-bandwidth.ts";
import { responseRewriteFamily } from "./response-rewrites.ts";
import { type AnnotationFamily, type IngressEdits, readRouteEdits } from "./route-edits.ts";
import { upstreamRequestFamily } from "./upstream-request.ts";

export const ANNOTATION_FAMILIES: readonly AnnotationFamily[] = [
  redirectFamily,
  upstreamRequestFamily,
  corsFamily,
  mirrorFamily,
  proxyTimeouts,
  responseBandwidthFamily,
  clientConcurrencyFamily,
  responseRewriteFamily,
  sourceRangeFamily,
  balancingFamily,
  modsecurityFamily,
];

export const ingressRouteEdits: (ingress: Ingress, ref: SourceRef) => IngressEdits = keptPerObject(
  (ingress: Ingress, ref: SourceRef) => readRouteEdits(ingress, ref, ANNOTATION_FAMILIES),
);
