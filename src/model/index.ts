/**
 * The one route model, split by concern; everything imports it from here.
 */

export type * from "./auth.ts";
export type * from "./backends.ts";
export type * from "./balancing.ts";
export type * from "./client-certificates.ts";
export type * from "./filters.ts";
export type * from "./gateway-model.ts";
export type * from "./http-routes.ts";
export type * from "./passthrough.ts";
export type * from "./rate-limits.ts";
export type * from "./route-limits.ts";
export type * from "./source.ts";
