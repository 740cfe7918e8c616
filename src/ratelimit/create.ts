import type { Limiter } from "./limiter.ts";
import { LocalLimiter } from "./local.ts";
import { RedisLimiter } from "./redis.ts";

/** The store `serve` uses: Redis when `--redis-url` is given, this process's memory otherwise. */
export function createLimiter(options: {
  readonly redisUrl?: string;
  readonly commandTimeoutMs?: number;
}): Limiter {
  if (options.redisUrl === undefined || options.redisUrl === "") return new LocalLimiter();
  return new RedisLimiter({
    url: options.redisUrl,
    ...(options.commandTimeoutMs !== undefined ? { commandTimeoutMs: options.commandTimeoutMs } : {}),
  });
}
