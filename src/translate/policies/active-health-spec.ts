/**
 * A BackendTrafficPolicy's `healthCheck.active`, with Envoy Gateway's names and defaults (its
 * ActiveHealthCheck type: timeout 1s, interval 3s, unhealthyThreshold 3, healthyThreshold 1; HTTP `GET`,
 * expected status 200). Only `type: HTTP` is done; TCP and GRPC checkers and `http.expectedResponse`
 * (a body match) are refused by name, never taken and ignored.
 */
import type { ActiveHealthCheck } from "../../model/index.ts";
import { parseDuration } from "../common/durations.ts";

const FIELDS = new Set(["type", "http", "timeout", "interval", "unhealthyThreshold", "healthyThreshold"]);
const HTTP_FIELDS = new Set(["path", "method", "expectedStatuses"]);
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PATCH"]);
/** Envoy Gateway's own bound on the path; printable ASCII from `/`, no spaces (it goes on the request line). */
const PATH = /^\/[!-~]{0,1023}$/;

/** `spec.healthCheck.active` read, or why it cannot be applied (one message naming the field). */
export function parseActiveHealthCheck(value: unknown): ActiveHealthCheck | string {
  const at = (f: string) => `spec.healthCheck.active.${f}`;
  const a = asObject(value);
  if (a === undefined) return "spec.healthCheck.active: must be an object";
  for (const key of Object.keys(a)) {
    if (FIELDS.has(key)) continue;
    if (key === "tcp" || key === "grpc")
      return `${at(key)}: ${key.toUpperCase()} health checks are not implemented (type HTTP is)`;
    return `${at(key)}: unknown field`;
  }
  if (a.type === "TCP" || a.type === "GRPC")
    return `${at("type")}: ${a.type} health checks are not implemented (type HTTP is)`;
  if (a.type !== "HTTP") return `${at("type")}: must be HTTP, got ${JSON.stringify(a.type)}`;
  const http = asObject(a.http);
  if (http === undefined) return `${at("http")}: must be set when type is HTTP`;
  for (const key of Object.keys(http)) {
    if (HTTP_FIELDS.has(key)) continue;
    if (key === "expectedResponse")
      return `${at("http.expectedResponse")}: matching the probe's body is not implemented (its status is checked)`;
    return `${at(`http.${key}`)}: unknown field`;
  }
  if (typeof http.path !== "string" || !PATH.test(http.path))
    return `${at("http.path")}: must be a path from / of at most 1024 printable characters, got ${JSON.stringify(http.path)}`;
  const method = http.method ?? "GET";
  if (typeof method !== "string" || !METHODS.has(method.toUpperCase()))
    return `${at("http.method")}: must be one of ${[...METHODS].join(", ")}, got ${JSON.stringify(method)}`;
  const statuses = http.expectedStatuses ?? [200];
  if (
    !Array.isArray(statuses) ||
    statuses.length === 0 ||
    statuses.length > 64 ||
    !statuses.every((s) => Number.isInteger(s) && s >= 100 && s <= 599)
  )
    return `${at("http.expectedStatuses")}: must be 1 to 64 statuses from 100 to 599, got ${JSON.stringify(statuses)}`;
  const duration = (f: string, fallback: number): number | string => {
    const v = a[f];
    if (v === undefined) return fallback;
    const ms = typeof v === "string" ? parseDuration(v) : undefined;
    if (ms === undefined || ms <= 0)
      return `${at(f)}: must be a positive Gateway API duration (e.g. 3s, 500ms), got ${JSON.stringify(v)}`;
    return ms;
  };
  const count = (f: string, fallback: number): number | string => {
    const v = a[f];
    if (v === undefined) return fallback;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 1000)
      return `${at(f)}: must be an integer from 1 to 1000, got ${JSON.stringify(v)}`;
    return v;
  };
  const values = [
    duration("interval", 3000),
    duration("timeout", 1000),
    count("unhealthyThreshold", 3),
    count("healthyThreshold", 1),
  ];
  const wrong = values.find((v) => typeof v === "string");
  if (wrong !== undefined) return wrong as string;
  const [intervalMs, timeoutMs, unhealthyThreshold, healthyThreshold] = values as number[];
  return {
    path: http.path,
    method: method.toUpperCase(),
    expectedStatuses: [...new Set(statuses as number[])],
    intervalMs: intervalMs as number,
    timeoutMs: timeoutMs as number,
    unhealthyThreshold: unhealthyThreshold as number,
    healthyThreshold: healthyThreshold as number,
  };
}

function asObject(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}
