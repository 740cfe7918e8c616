/**
 * The settings of a ScaleToZeroPolicy's spec, or of a Service's `gatehouse.dev/scale-*` annotations (the
 * same settings for Ingress users, who write no policy), judged field by field: unknown fields are
 * errors and a policy is applied whole or not at all (docs/scale-to-zero.md).
 */
import type { BackendActivation } from "../../model/index.ts";
import { parseDuration } from "../common/durations.ts";

/** What a policy or the annotations set, before the Service port is known. */
export type ScaleSettings = Omit<BackendActivation, "source" | "servicePort">;

export const scaleDefaults = {
  scaler: "Gateway",
  minReplicas: 0,
  idleMs: 300_000,
  maxHoldMs: 30_000,
  queueLimit: 100,
  maxHeldBodyBytes: 1_048_576,
} as const;

const specFields = new Set([
  "targetRefs",
  "workload",
  "scaler",
  "minReplicas",
  "idlePeriod",
  "maxHoldTime",
  "queueLimit",
  "maxHeldBodyBytes",
]);

/** The annotation that opts a Service in (`Deployment/NAME` or `StatefulSet/NAME`), and its companions. */
export const scaleAnnotations = {
  workload: "gatehouse.dev/scale-workload",
  scaler: "gatehouse.dev/scaler",
  minReplicas: "gatehouse.dev/scale-min-replicas",
  idlePeriod: "gatehouse.dev/scale-idle-period",
  maxHoldTime: "gatehouse.dev/scale-max-hold-time",
  queueLimit: "gatehouse.dev/scale-queue-limit",
  maxHeldBodyBytes: "gatehouse.dev/scale-max-held-body-bytes",
} as const;

/** The policy's settings, or why it cannot be applied (one message naming the field). */
export function parseScaleSpec(spec: Record<string, unknown>): ScaleSettings | string {
  for (const key of Object.keys(spec))
    if (!specFields.has(key)) {
      const near = [...specFields].find((f) => f.toLowerCase() === key.toLowerCase());
      return `spec.${key}: unknown field${near === undefined ? "" : ` (the field is spelt ${near})`}`;
    }
  const w = spec.workload;
  if (w === undefined || w === null || typeof w !== "object" || Array.isArray(w))
    return "spec.workload: required (kind Deployment or StatefulSet, and name)";
  for (const key of Object.keys(w))
    if (key !== "kind" && key !== "name") return `spec.workload.${key}: unknown field`;
  const { kind, name } = w as Record<string, unknown>;
  return settingsOf(
    { kind, name, ...spec },
    (f) => `spec.${f === "kind" || f === "name" ? `workload.${f}` : f}`,
    false,
  );
}

/**
 * The annotations' settings; undefined when the Service does not opt in (no `scale-workload`), a string
 * when it does but something is wrong (a warning on the Service; the backend is then served as before).
 */
export function parseScaleAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
): ScaleSettings | string | undefined {
  const a = annotations ?? {};
  const workload = a[scaleAnnotations.workload];
  if (workload === undefined) {
    const stray = Object.values(scaleAnnotations).find((k) => a[k] !== undefined);
    return stray === undefined ? undefined : `${stray} is set without ${scaleAnnotations.workload}`;
  }
  const slash = workload.indexOf("/");
  if (slash < 0)
    return `${scaleAnnotations.workload}: must be Deployment/NAME or StatefulSet/NAME, got ${JSON.stringify(workload)}`;
  const fields: Record<string, unknown> = {
    kind: workload.slice(0, slash),
    name: workload.slice(slash + 1),
  };
  for (const [field, key] of Object.entries(scaleAnnotations))
    if (field !== "workload" && a[key] !== undefined) fields[field] = a[key];
  const at = (f: string) =>
    f === "kind" || f === "name"
      ? `${scaleAnnotations.workload} (Deployment/NAME or StatefulSet/NAME)`
      : scaleAnnotations[f as keyof typeof scaleAnnotations];
  return settingsOf(fields, at, true);
}

function settingsOf(
  f: Record<string, unknown>,
  at: (field: string) => string,
  fromText: boolean,
): ScaleSettings | string {
  const { kind, name } = f;
  if (kind !== "Deployment" && kind !== "StatefulSet")
    return `${at("kind")}: must be Deployment or StatefulSet, got ${JSON.stringify(kind)}`;
  if (typeof name !== "string" || !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name))
    return `${at("name")}: must be a Kubernetes object name, got ${JSON.stringify(name)}`;
  const scaler = f.scaler ?? scaleDefaults.scaler;
  if (scaler !== "Gateway" && scaler !== "External")
    return `${at("scaler")}: must be Gateway or External, got ${JSON.stringify(scaler)}`;
  const int = (field: string, fallback: number, min: number, max: number): number | string => {
    const raw = f[field];
    if (raw === undefined) return fallback;
    const v = fromText && typeof raw === "string" && /^[0-9]{1,9}$/.test(raw) ? Number(raw) : raw;
    if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max)
      return `${at(field)}: must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`;
    return v;
  };
  const duration = (field: string, fallback: number): number | string => {
    const raw = f[field];
    if (raw === undefined) return fallback;
    const ms = typeof raw === "string" ? parseDuration(raw) : undefined;
    if (ms === undefined || ms <= 0)
      return `${at(field)}: must be a positive Gateway API duration (e.g. 30s, 5m), got ${JSON.stringify(raw)}`;
    return ms;
  };
  const values = [
    int("minReplicas", scaleDefaults.minReplicas, 0, 1),
    duration("idlePeriod", scaleDefaults.idleMs),
    duration("maxHoldTime", scaleDefaults.maxHoldMs),
    int("queueLimit", scaleDefaults.queueLimit, 1, 100_000),
    int("maxHeldBodyBytes", scaleDefaults.maxHeldBodyBytes, 0, 64 * 1024 * 1024),
  ];
  const wrong = values.find((v) => typeof v === "string");
  if (typeof wrong === "string") return wrong;
  const [minReplicas, idleMs, maxHoldMs, queueLimit, maxHeldBodyBytes] = values as number[];
  return {
    workload: { kind, name },
    scaler,
    minReplicas: minReplicas === 1 ? 1 : 0,
    idleMs: idleMs as number,
    maxHoldMs: maxHoldMs as number,
    queueLimit: queueLimit as number,
    maxHeldBodyBytes: maxHeldBodyBytes as number,
  };
}
