/**
 * What the data leaves to the harness (README "Mutations", "What the JSON cannot fully capture"): `<...>`
 * values in mutations and checks, the address pools of GatewayStaticAddresses, and the
 * `{GATEWAY_CONTROLLER_NAME}` of GatewayClassObservedGenerationBump. An unknown placeholder is an error,
 * never left in place.
 */
import { gatewayController, type Placed } from "../gateway-api-manifests.ts";
import type { Certificate } from "./certificates.ts";

/** Usable: an address of the test's own pool (loopback: Linux routes all of 127/8 to lo), past the ones
 * the pool hands out first. */
export function usableAddress(pool: string) {
  return { type: "IPAddress", value: pool.replace(/\.0\/24$/, ".250") } as const;
}
/** Unusable: TEST-NET-1 (RFC 5737), on no interface of this host, so it cannot be bound. */
export const unusableAddress = { type: "IPAddress", value: "192.0.2.1" } as const;

/** What a placeholder may stand for: the run's certificates, the test's address pool. */
export interface PlaceholderContext {
  readonly certs?: ReadonlyMap<string, Certificate>;
  readonly pool: string;
}

function fixed(pool: string): Record<string, string> {
  return {
    "<usable pool entry type>": usableAddress(pool).type,
    "<usable pool entry value>": usableAddress(pool).value,
    "<unusable pool entry type>": unusableAddress.type,
    "<unusable pool entry value>": unusableAddress.value,
    "<implementation controllerName>": gatewayController,
  };
}

/** `value` with every `<...>` string filled in (deeply); `<data.ca.crt of ConfigMap X>` from the certificates. */
export function substitute(value: unknown, ctx: PlaceholderContext): unknown {
  if (Array.isArray(value)) return value.map((v) => substitute(v, ctx));
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, ctx)]));
  if (typeof value !== "string" || !/^<.*>$/.test(value)) return value;
  const known = fixed(ctx.pool)[value];
  if (known !== undefined) return known;
  const ca = /^<data\.ca\.crt of ConfigMap (\S+)>$/.exec(value);
  const cert = ca ? ctx.certs?.get(ca[1] as string) : undefined;
  if (cert) return cert.certPem;
  throw new Error(`placeholder ${value} cannot be filled in`);
}

/**
 * Upstream's applier before the test: `PLACEHOLDER_UNUSABLE_ADDRS` / `PLACEHOLDER_USABLE_ADDRS` entries of a
 * Gateway's spec.addresses become the pools' entries; a GatewayClass naming `{GATEWAY_CONTROLLER_NAME}`
 * gets our controller.
 */
export function fillSetupPlaceholders(objects: readonly Placed[], pool: string): Placed[] {
  return objects.map((p) => {
    const o = p.object;
    if (o.kind === "GatewayClass" && o.spec?.controllerName === "{GATEWAY_CONTROLLER_NAME}")
      return { file: p.file, object: { ...o, spec: { ...o.spec, controllerName: gatewayController } } };
    const addresses =
      o.kind === "Gateway" ? (o.spec?.addresses as { value?: string }[] | undefined) : undefined;
    if (!addresses?.some((a) => a.value?.startsWith("PLACEHOLDER_"))) return p;
    const filled = addresses.map((a) =>
      a.value === "PLACEHOLDER_USABLE_ADDRS"
        ? { ...usableAddress(pool) }
        : a.value === "PLACEHOLDER_UNUSABLE_ADDRS"
          ? { ...unusableAddress }
          : a,
    );
    return { file: p.file, object: { ...o, spec: { ...o.spec, addresses: filled } } };
  });
}

/** A JSON merge patch (RFC 7386): objects merge, null deletes, anything else (lists too) replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target !== null && typeof target === "object" && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
