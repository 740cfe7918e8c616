import { Hono } from "hono";
import { dumpModel } from "../model/dump.ts";
import type { GatewayModel, Problem } from "../model/index.ts";
import { activationReport } from "../proxy/activation/registry.ts";
import { outlierReport } from "../proxy/health/outlier-registry.ts";
import type { ObjectStatus } from "../status/types.ts";
import type { Dashboard } from "./dashboard/dashboard.ts";
import { overviewOf } from "./dashboard/overview.ts";
import { dashboardPage } from "./dashboard/page.ts";
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

/** Longest query string the dashboard's endpoints take (its search is a host and a path). */
const maxQueryBytes = 2048;

/**
 * The admin app, served on `--admin-port` only (never on traffic ports): health, readiness and the
 * current model, Prometheus metrics, and the read-only dashboard (docs/dashboard.md) when given one.
 */
export function createAdminApp(state: AdminState, metrics: GatewayMetrics, dashboard?: Dashboard): Hono {
  const app = new Hono();
  if (dashboard !== undefined) {
    const tooLong = (url: string) => {
      const q = url.indexOf("?");
      return q >= 0 && url.length - q - 1 > maxQueryBytes;
    };
    app.use("/api/*", async (c, next) => (tooLong(c.req.url) ? c.text("query too long\n", 414) : next()));
    app.get("/", (c) =>
      tooLong(c.req.url)
        ? c.text("query too long\n", 414)
        : c.body(dashboardPage, 200, {
            "content-type": "text/html; charset=utf-8",
            "cache-control": "no-store",
            // Everything is inline and same-origin; nothing may be loaded from elsewhere.
            "content-security-policy":
              "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:",
          }),
    );
    app.get("/api/overview", (c) => c.json(overviewOf(state.model, state.problems, state.statuses)));
    app.get("/api/stats", async (c) => {
      await dashboard.readPeers();
      return c.json(dashboard.stats());
    });
    app.get("/api/events", (c) => dashboard.events(c.req.raw.signal));
    // This process's counters only, for the primary of `--workers` to add up (dashboard/route-totals.ts).
    app.get("/api/route-totals", (c) => c.json(dashboard.ownTotals()));
  }
  app.get("/healthz", (c) => c.text("ok\n"));
  app.get("/readyz", (c) => (state.ready ? c.text("ready\n") : c.text("not ready\n", 503)));
  app.get("/debug/model", (c) =>
    c.body(state.model ? dumpModel(state.model) : "# no model applied yet\n", 200, {
      "content-type": "application/yaml; charset=utf-8",
    }),
  );
  app.get("/debug/problems", (c) => c.json(state.problems));
  app.get("/debug/status", (c) => c.json(state.statuses));
  // Passive health checking in this process (each `--workers` process ejects on what it sees).
  app.get("/debug/health", (c) => c.json(outlierReport()));
  // Activated backends (ScaleToZeroPolicy) of this process: held requests, in flight, wakes.
  app.get("/debug/activation", (c) => c.json(activationReport()));
  app.get("/metrics", async (c) =>
    c.body(await metrics.text(), 200, { "content-type": metrics.registry.contentType }),
  );
  // This process's samples only, for the primary of `--workers` to aggregate (metrics.ts).
  app.get("/metrics/process.json", async (c) => c.json(await metrics.registry.getMetricsAsJSON()));
  return app;
}
