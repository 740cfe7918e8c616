/**
 * The last-request time of each activated backend, shared by every gateway replica through Redis
 * (`--redis-url`), so one busy replica keeps a workload up that the leader alone would find idle. Each
 * replica publishes, once a second, the backends it served since the last publish or has requests in
 * flight for (in flight counts as "now": a long request keeps its workload up); a key only ever moves
 * forward (a script keeps the larger time) and expires a day after its last write. The leader reads the
 * key before it scales a workload down; Redis unreachable means "not idle" (no scale-down on a guess).
 */
import type { Cluster, Redis } from "ioredis";
import { logger } from "../../observability/logger.ts";
import { connect } from "../../ratelimit/redis.ts";
import { parseRedisUrl } from "../../ratelimit/redis-url.ts";
import { allActivators, onActivationWoke } from "./registry.ts";

const log = logger.child({ component: "activation" });

/** SET the key to ARGV[1] unless it holds a larger time already; PX ARGV[2]. */
const maxSetLua = `local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > c then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

const KEY_TTL_MS = 86_400_000;

export class SharedActivity {
  readonly #client: Redis | Cluster;
  readonly #prefix: string;
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #published = new Map<string, number>();
  #warned = false;
  #publishing: Promise<void> | undefined;
  #again = false;

  constructor(url: string, opts: { readonly keyPrefix?: string; readonly everyMs?: number } = {}) {
    const target = parseRedisUrl(url);
    if ("error" in target) throw new Error(`--redis-url: ${target.error}`);
    this.#client = connect(target, 500);
    this.#client.on("error", () => {}); // the rate limiter logs connection trouble; reads here fail safe
    this.#prefix = opts.keyPrefix ?? "gatehouse:activity:";
    this.#timer = setInterval(() => void this.publish(), opts.everyMs ?? 1_000);
    // A wake or the first request after a quiet spell goes out at once: the leader may be about to find
    // the workload idle on what it read a second ago.
    onActivationWoke(() => void this.publish());
  }

  /** Publish what this replica served since the last call (the timer calls it; tests may too). */
  async publish(): Promise<void> {
    if (this.#publishing !== undefined) {
      this.#again = true;
      return this.#publishing;
    }
    this.#publishing = this.#publishOnce().finally(() => {
      this.#publishing = undefined;
    });
    await this.#publishing;
    if (this.#again) {
      this.#again = false;
      await this.publish();
    }
  }

  async #publishOnce(): Promise<void> {
    const now = Date.now();
    for (const a of allActivators()) {
      const last = a.inflight > 0 || a.held > 0 ? now : a.lastRequestMs;
      if (last <= (this.#published.get(a.backendId) ?? 0)) continue;
      try {
        await this.#client.eval(maxSetLua, 1, this.#prefix + a.backendId, String(last), String(KEY_TTL_MS));
        this.#published.set(a.backendId, last);
        this.#warned = false;
      } catch (err) {
        if (!this.#warned)
          log.warn("could not share the last-request time through Redis", { error: String(err) });
        this.#warned = true;
        return;
      }
    }
  }

  /** The latest request time any replica published for `backendId` (0: none); undefined: Redis did not answer. */
  async lastActivity(backendId: string): Promise<number | undefined> {
    try {
      const v = await this.#client.get(this.#prefix + backendId);
      return v === null ? 0 : Number(v);
    } catch {
      return undefined;
    }
  }

  close(): void {
    clearInterval(this.#timer);
    onActivationWoke(() => {});
    this.#client.disconnect();
  }
}
