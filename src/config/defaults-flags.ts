import { z } from "zod";

/** `namespace/name` of an object the operator names on the command line. */
const namespacedName = z
  .string()
  .regex(/^[a-z0-9.-]+\/[a-z0-9.-]+$/, "must be namespace/name")
  .optional();

/**
 * Flags naming what the gateway falls back on where nothing else applies: the certificate, the bodies of
 * its own errors, and where a request no route matches goes (each ingress-nginx's controller flag or
 * ConfigMap setting of the same role; docs/tls.md, docs/ingress.md).
 */
export const defaultsFlags = {
  /** TLS Secret served on the Ingress HTTPS listener to clients no Ingress certificate matches; unset: a
   * self-signed certificate generated at start (docs/tls.md). */
  "default-certificate": namespacedName,
  /** ConfigMap whose `<code>.<html|json|txt|xml>` keys are the bodies of the gateway's own errors
   * (404, 502, 503, 504, …) instead of its plain-text ones (docs/ingress.md, Error pages). */
  "error-pages-configmap": namespacedName,
  /** Service requests matching no Ingress host or path go to (ingress-nginx `--default-backend-service`),
   * instead of the gateway's 404. */
  "default-backend-service": namespacedName,
};
