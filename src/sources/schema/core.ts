import { z } from "zod";
import { objectMeta, typedObject } from "./meta.ts";

/** A Service port; `targetPort` is a number or the name of a container port. */
const servicePort = z
  .object({
    name: z.string().optional(),
    protocol: z.enum(["TCP", "UDP", "SCTP"]).optional(),
    appProtocol: z.string().optional(),
    port: z.number().int().min(1).max(65535),
    targetPort: z.union([z.number().int().min(1).max(65535), z.string().min(1)]).optional(),
    nodePort: z.number().int().optional(),
  })
  .strict();

export const service = typedObject(
  ["v1"],
  "Service",
  z
    .object({
      type: z.enum(["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"]).optional(),
      ports: z.array(servicePort).optional(),
      selector: z.record(z.string(), z.string()).optional(),
      clusterIP: z.string().optional(),
      clusterIPs: z.array(z.string()).optional(),
      externalName: z.string().optional(),
    })
    .loose(),
);
export type Service = z.infer<typeof service>;

/** Secrets carry base64 `data` and/or plain `stringData` (folder mode); no `spec`. */
export const secret = z
  .object({
    apiVersion: z.literal("v1"),
    kind: z.literal("Secret"),
    metadata: objectMeta,
    type: z.string().optional(),
    data: z.record(z.string(), z.string()).optional(),
    stringData: z.record(z.string(), z.string()).optional(),
    immutable: z.boolean().optional(),
  })
  .strict();
export type Secret = z.infer<typeof secret>;

/**
 * A ConfigMap: only `data` is read (ingress-nginx `custom-headers` names one); `binaryData` is accepted and
 * never read (the Kubernetes source drops it, and the data of ConfigMaps nothing references).
 */
export const configMap = z
  .object({
    apiVersion: z.literal("v1"),
    kind: z.literal("ConfigMap"),
    metadata: objectMeta,
    data: z.record(z.string(), z.string()).nullish(),
    binaryData: z.record(z.string(), z.string()).nullish(),
    immutable: z.boolean().optional(),
  })
  .strict();
export type ConfigMap = z.infer<typeof configMap>;

const endpoint = z
  .object({
    addresses: z.array(z.string().min(1)).min(1),
    conditions: z
      .object({
        ready: z.boolean().optional(),
        serving: z.boolean().optional(),
        terminating: z.boolean().optional(),
      })
      .strict()
      .optional(),
    hostname: z.string().optional(),
    nodeName: z.string().optional(),
    zone: z.string().optional(),
    targetRef: z
      .object({ kind: z.string().optional(), name: z.string().optional(), namespace: z.string().optional() })
      .loose()
      .optional(),
  })
  .loose();

/** discovery.k8s.io/v1 EndpointSlice: has no `spec`, its fields sit at the top level. */
export const endpointSlice = z
  .object({
    apiVersion: z.literal("discovery.k8s.io/v1"),
    kind: z.literal("EndpointSlice"),
    metadata: objectMeta,
    addressType: z.enum(["IPv4", "IPv6", "FQDN"]),
    endpoints: z.array(endpoint).nullish(),
    ports: z
      .array(
        z
          .object({
            name: z.string().nullish(),
            port: z.number().int().min(1).max(65535).nullish(),
            protocol: z.string().nullish(),
            appProtocol: z.string().nullish(),
          })
          .strict(),
      )
      .nullish(),
  })
  .strict();
export type EndpointSlice = z.infer<typeof endpointSlice>;
