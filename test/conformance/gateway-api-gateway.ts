/**
 * The gateway under test, in-process: started on a test's folder with Gateways given their own loopback
 * addresses from a pool, and read back through its admin state (computed statuses, model).
 */
import { type RunningGateway, startGateway } from "../../src/cli/serve.ts";
import { parseServeConfig } from "../../src/config/config.ts";
import type { ObjectStatus } from "../../src/status/types.ts";
import type { Front } from "../helpers/fronts.ts";
import { freePort } from "../helpers/ports.ts";
import { splitRef } from "./gateway-api-data.ts";
import { gatewayController } from "./gateway-api-manifests.ts";

/** Loopback addresses the Gateways bind (Linux routes all of 127/8 to lo). */
export const addressPool = "127.0.1.0/24";

/**
 * `http2`: HTTPS listeners also speak HTTP/2 (`--http2 true`, off by default); the runner turns it on for
 * the tests that send HTTP/2 over TLS, so the others cover the default Bun.serve listeners.
 * `GATEHOUSE_HTTP2=true` in the environment turns it on for every test (the node:http2 listeners against
 * the whole suite). `pool`: the addresses its Gateways get (tests that run side by side need their own).
 */
export async function startGatewayOn(
  folder: string,
  front: Front,
  http2 = false,
  pool = addressPool,
): Promise<RunningGateway> {
  const config = parseServeConfig(
    [
      "--dir",
      folder,
      "--bind",
      "127.0.0.1",
      // The Ingress default listeners stay out of the way of Gateway ports (8080 is one of them).
      "--http-port",
      String(await freePort()),
      "--https-port",
      String(await freePort()),
      "--admin-port",
      "0",
      "--gateway-address-pool",
      pool,
      "--gateway-controller",
      gatewayController,
      "--debounce-ms",
      "10",
      "--workers",
      "1",
      "--front",
      front,
      "--http2",
      String(http2 || process.env.GATEHOUSE_HTTP2 === "true"),
    ],
    { GATEHOUSE_LOG_LEVEL: "error", GATEHOUSE_ACCESS_LOG_SAMPLE: "0" },
  );
  return startGateway(config);
}

/** The statuses the gateway computed on its last apply (`state.statuses`, see src/status/types.ts). */
export function statusesOf(gw: RunningGateway): readonly ObjectStatus[] {
  return gw.state.statuses ?? [];
}

/**
 * Where to dial Gateway `ref`: `status.addresses[0].value`, as upstream does. Without one, the address its
 * listeners bind in the model (so traffic cases still say something useful while status is missing).
 */
export function gatewayAddress(gw: RunningGateway, ref: string): string | undefined {
  const { namespace, name } = splitRef(ref);
  const status = statusesOf(gw).find(
    (s) => s.target.kind === "Gateway" && s.target.namespace === namespace && s.target.name === name,
  )?.status as { addresses?: { value?: string }[] } | undefined;
  const fromStatus = status?.addresses?.[0]?.value;
  if (fromStatus) return fromStatus;
  return gw.state.model?.listeners.find(
    (l) =>
      l.source.kind === "Gateway" && l.source.namespace === namespace && l.source.name === name && l.address,
  )?.address;
}

/** Resolve after the gateway applied the folder's next change, or reject after `ms`. */
export function applied(gw: RunningGateway, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    gw.nextApply(),
    new Promise<void>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the gateway did not apply the change within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
