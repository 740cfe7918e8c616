/**
 * The Secret holding the keys that sign timed session tokens (proxy/balancing/session-keys.ts), so every
 * replica signs and verifies alike: `gatehouse-session-keys` in the gateway's own namespace (the one its
 * leader-election Lease lives in), with data `current` and, during a rotation, `previous` (each the raw
 * key, at least 16 bytes). Every process reads it at start and then every minute (a rotation reaches all
 * replicas within that, and `previous` keeps their tokens verifying meanwhile); when it is absent, the
 * leader creates it with a random 32-byte key. Until it is read, a random per-process key signs, and a
 * log line says so. API errors never throw out of here.
 */
import { randomBytes } from "node:crypto";
import { logger } from "../../observability/logger.ts";
import { decodeKey, KEY_BYTES, setSessionKeys } from "../../proxy/balancing/session-keys.ts";
import { describeFailure, type KubeClient } from "./client.ts";
import { resourcePath, watchedResources } from "./resources.ts";

const log = logger.child({ component: "session-keys" });

export const SESSION_KEY_SECRET = "gatehouse-session-keys";
/** How often the Secret is read again. */
const REFRESH_MS = 60_000;

export class SessionKeySecret {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #loaded = "";
  #stopped = false;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly isLeader: () => boolean,
    private readonly refreshMs = REFRESH_MS,
  ) {}

  /** Reads the Secret once (waiting for it), then keeps reading it in the background. */
  async start(): Promise<void> {
    if (!(await this.#round()))
      log.warn(
        "the session key Secret is not read yet: until it is, sessions with an idleTimeout or absoluteTimeout are signed with a random per-process key and do not span replicas",
        { secret: `${this.namespace}/${SESSION_KEY_SECRET}` },
      );
    this.#schedule();
  }

  /** One read; the leader creates the Secret when it is absent. Whether keys are installed. */
  async #round(): Promise<boolean> {
    const path = resourcePath(watchedResources.Secret, this.namespace, SESSION_KEY_SECRET);
    try {
      const res = await this.client.get(path);
      if (res.status === 404) {
        if (!this.isLeader()) return false;
        const created = await this.client.request(
          "POST",
          resourcePath(watchedResources.Secret, this.namespace),
          {
            body: {
              apiVersion: "v1",
              kind: "Secret",
              metadata: { name: SESSION_KEY_SECRET, namespace: this.namespace },
              type: "Opaque",
              data: { current: randomBytes(KEY_BYTES).toString("base64") },
            },
          },
        );
        if (created.status === 201 || created.status === 200) {
          log.info("created the session key Secret", { secret: `${this.namespace}/${SESSION_KEY_SECRET}` });
          return this.#install(created.body);
        }
        // 409: another leader (a moment ago) created it; the next round reads it.
        if (created.status !== 409)
          log.warn("cannot create the session key Secret", { status: describeFailure(created) });
        return false;
      }
      if (res.status !== 200) {
        log.warn("cannot read the session key Secret", { status: describeFailure(res) });
        return false;
      }
      return this.#install(res.body);
    } catch (err) {
      log.warn("cannot read the session key Secret", { error: err as Error });
      return false;
    }
  }

  #install(body: unknown): boolean {
    const data = ((body ?? {}) as { data?: Record<string, unknown> }).data ?? {};
    const text = (k: string) => (typeof data[k] === "string" ? (data[k] as string) : undefined);
    const current = text("current");
    const previous = text("previous");
    if (`${current}|${previous}` === this.#loaded) return true;
    try {
      if (current === undefined) throw new Error("it has no `current` key");
      setSessionKeys({
        current: decodeKey(current),
        ...(previous !== undefined ? { previous: decodeKey(previous) } : {}),
      });
      this.#loaded = `${current}|${previous}`;
      log.info("session keys loaded", {
        secret: `${this.namespace}/${SESSION_KEY_SECRET}`,
        previous: previous !== undefined,
      });
      return true;
    } catch (err) {
      // The keys in use stay; a bad Secret must not end every session.
      log.error("the session key Secret is unusable; the keys in use stay", { error: err as Error });
      return false;
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    // Until the keys are in, retry sooner: a follower waits for the leader to create the Secret.
    const delay = this.#loaded === "" ? Math.min(this.refreshMs, 2_000) : this.refreshMs;
    this.#timer = setTimeout(() => {
      void this.#round().then(() => this.#schedule());
    }, delay);
    this.#timer.unref?.();
  }

  /** Read now (a new leader creates an absent Secret without waiting for the next round). */
  kick(): void {
    if (this.#stopped || this.#loaded !== "") return;
    void this.#round();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }
}
