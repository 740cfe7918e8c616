import { z } from "zod";
import { typedObject } from "./meta.ts";

/** A backend of an Ingress path or default backend: a Service port, or a resource (which we refuse later). */
const ingressBackend = z
  .object({
    service: z
      .object({
        name: z.string().min(1),
        port: z
          .object({
            number: z.number().int().min(1).max(65535).optional(),
            name: z.string().min(1).optional(),
          })
          .strict(),
      })
      .strict()
      .optional(),
    resource: z
      .object({ apiGroup: z.string().optional(), kind: z.string(), name: z.string() })
      .strict()
      .optional(),
  })
  .strict();
export type IngressBackend = z.infer<typeof ingressBackend>;

const httpIngressPath = z
  .object({
    path: z.string().optional(),
    pathType: z.enum(["Exact", "Prefix", "ImplementationSpecific"]),
    backend: ingressBackend,
  })
  .strict();

const ingressRule = z
  .object({
    host: z.string().optional(),
    http: z
      .object({ paths: z.array(httpIngressPath).min(1) })
      .strict()
      .optional(),
  })
  .strict();

export const ingress = typedObject(
  ["networking.k8s.io/v1"],
  "Ingress",
  z
    .object({
      ingressClassName: z.string().optional(),
      defaultBackend: ingressBackend.optional(),
      tls: z
        .array(
          z.object({ hosts: z.array(z.string()).optional(), secretName: z.string().optional() }).strict(),
        )
        .optional(),
      rules: z.array(ingressRule).optional(),
    })
    .strict(),
);
export type Ingress = z.infer<typeof ingress>;

export const ingressClass = typedObject(
  ["networking.k8s.io/v1"],
  "IngressClass",
  z
    .object({
      controller: z.string().optional(),
      parameters: z.record(z.string(), z.unknown()).optional(),
    })
    .strict(),
);
export type IngressClass = z.infer<typeof ingressClass>;
