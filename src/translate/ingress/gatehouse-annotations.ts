/**
 * Gatehouse's own Ingress annotations (`gatehouse.dev/…`), beside ingress-nginx's table
 * (nginx-annotations.ts): the audit, the docs table and the tests read both.
 */
import { type AnnotationEntry, honoured } from "./annotation-entry.ts";

/** Gatehouse's own Ingress annotations (`gatehouse.dev/…`); any other key under that prefix is unknown. */
export const GATEHOUSE_PREFIX = "gatehouse.dev/";

export const GATEHOUSE_ANNOTATIONS: Readonly<Record<string, AnnotationEntry>> = {
  "access-log-sample": honoured(
    "the share of its paths' requests written to the access log, 0 to 1, in place of --access-log-sample (enable-access-log: false wins); with --access-log-sample 0 there is no access log, and the gateway warns (docs/observability.md)",
  ),
  "auth-policy": honoured("the named AuthPolicy of the Ingress's namespace guards its paths (docs/auth.md)"),
  "waf-mode": honoured(
    "with enable-modsecurity: Enforce answers what the engine blocks (403), DetectionOnly (the default) logs and counts it (docs/waf.md)",
  ),
  "waf-paranoia-level": honoured("with enable-owasp-core-rules: the CRS paranoia level, 1 (default) to 4"),
  "waf-anomaly-threshold": honoured(
    "with enable-owasp-core-rules: the CRS inbound anomaly score that blocks (default 5)",
  ),
  "waf-excluded-rule-ids": honoured("with enable-owasp-core-rules: CRS rule ids removed, comma-separated"),
  "waf-excluded-rule-tags": honoured(
    "with enable-owasp-core-rules: CRS rules removed by tag, comma-separated",
  ),
  "waf-body-limit": honoured("with enable-modsecurity: request body bytes inspected (default 131072)"),
  "waf-body-over-limit": honoured(
    "with enable-modsecurity: a longer body is refused with 413 (Reject, the default) or inspected in part (InspectPartial)",
  ),
  "waf-max-arguments": honoured(
    "with enable-modsecurity: query and body arguments a request may carry (default 255); more are refused with 400",
  ),
};
