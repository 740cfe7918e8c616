import { Hono } from "hono";
import { dumpModel } from "../model/dump.ts";
import type { GatewayModel, Problem } from "../model/index.ts";
import type { ObjectStatus } from "../status/types.ts";
import type { GatewayMetrics } from "./metrics.ts";

/** What the admin endpoints read; the serve command updates it after each apply. */
export interface AdminState {
  /** True once the first snapshot has been translated and applied, false again while draining. */
  ready: boolean;
  model: GatewayModel | undefined;
  problems: readonly Problem[];
  /** Status computed for Gateway API objects (in a cluster the leader writes it back; in folder mode
   * this is the only place to see it). */
  statuses: readonly ObjectStatus[];
}

/**
 * The admin app, served on `--admin-port` only (never on traffic ports): health, readiness and the
 * current model, Prometheus metrics.
 */
export function createAdminApp(state: AdminState, metrics: GatewayMetrics): Hono {
  const app = new Hono();
  app.get("/healthz", (c) => c.text("ok\n"));
  app.get("/readyz", (c) => (state.ready ? c.text("ready\n") : c.text("not ready\n", 503)));
  app.get("/debug/model", (c) =>
    c.body(state.model ? dumpModel(state.model) : "# no model applied yet\n", 200, {
      "content-type": "application/yaml; charset=utf-8",
    }),
  );
  app.get("/debug/problems", (c) => c.json(state.problems));
  app.get("/debug/status", (c) => c.json(state.statuses));
  app.get("/metrics", async (c) =>
    c.body(await metrics.text(), 200, { "content-type": metrics.registry.contentType }),
  );
  // This process's samples only, for the primary of `--workers` to aggregate (metrics.ts).
  app.get("/metrics/process.json", async (c) => c.json(await metrics.registry.getMetricsAsJSON()));
  return app;
}
