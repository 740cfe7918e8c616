/**
 * Problems seen per request (an upstream down, a route that cannot run) would otherwise write one line
 * per request and flood the logs exactly when an operator needs them. A rate-limited log writes at most
 * one line per key (typically a route name and a message) per window; the next line written for that key
 * says how many were suppressed in between.
 */
import { type Logger, logger } from "./logger.ts";

export type LimitedLevel = "warn" | "error";

/** Logs `msg` unless the same key and message were logged less than a window ago. */
export type LimitedLog = (
  level: LimitedLevel,
  key: string,
  msg: string,
  fields: Record<string, unknown>,
) => void;

interface Slot {
  /** When the next line may be written (ms, monotonic). */
  until: number;
  suppressed: number;
}

/** Keys are bounded by the routes of the model; this only guards against a pathological churn. */
const MAX_KEYS = 4096;

export function rateLimitedLog(
  log: Logger,
  windowMs = 10_000,
  now: () => number = () => performance.now(),
): LimitedLog {
  const slots = new Map<string, Slot>();
  return (level, key, msg, fields) => {
    const t = now();
    const id = `${msg}\u0000${key}`;
    const slot = slots.get(id);
    if (slot !== undefined && t < slot.until) {
      slot.suppressed++;
      return;
    }
    const suppressed = slot?.suppressed ?? 0;
    if (slot !== undefined) {
      slot.until = t + windowMs;
      slot.suppressed = 0;
    } else {
      if (slots.size >= MAX_KEYS) prune(slots, t);
      slots.set(id, { until: t + windowMs, suppressed: 0 });
    }
    log[level](msg, suppressed > 0 ? { ...fields, suppressed } : fields);
  };
}

function prune(slots: Map<string, Slot>, t: number): void {
  for (const [id, s] of slots) if (s.until <= t && s.suppressed === 0) slots.delete(id);
  if (slots.size >= MAX_KEYS) slots.clear();
}

/** The data plane's per-request problems: one line per route and message per 10 s. */
export const limitedLog: LimitedLog = rateLimitedLog(logger.child({ component: "proxy" }));
