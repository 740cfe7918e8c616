/**
 * Folder mode's keys for timed session tokens (proxy/balancing/session-keys.ts): `--session-key-file`
 * (one base64 key per line: current, then previous during a rotation), shared by every replica given
 * the same file. Without it, a random per-process key, said at start: sessions with an idleTimeout or
 * absoluteTimeout then neither survive a restart nor span replicas. `--workers` children take the
 * primary's random key, so the processes of one gateway agree. (`--kube`: the Secret, cluster.ts.)
 */

import { readFileSync } from "node:fs";
import type { ServeConfig } from "../config/config.ts";
import { logger } from "../observability/logger.ts";
import { decodeKey, parseSessionKeys, sessionKeys, setSessionKeys } from "../proxy/balancing/session-keys.ts";
import { WORKER_SESSION_KEY_ENV } from "./worker-env.ts";

const log = logger.child({ component: "session-keys" });

/** The primary's random key, handed to `--workers` children. */

/** Install the keys; a file that cannot be read or holds no valid key stops the start. */
export function installFolderSessionKeys(config: ServeConfig): void {
  const file = config["session-key-file"];
  if (file !== undefined) {
    try {
      setSessionKeys(parseSessionKeys(readFileSync(file, "utf8")));
    } catch (err) {
      throw new Error(`--session-key-file ${file}: ${(err as Error).message}`);
    }
    log.info("session keys loaded", { file, previous: sessionKeys().previous !== undefined });
    return;
  }
  const inherited = process.env[WORKER_SESSION_KEY_ENV];
  if (inherited !== undefined && process.env.GATEHOUSE_WORKER_OF) {
    setSessionKeys({ current: decodeKey(inherited) });
    return;
  }
  log.warn(
    "no --session-key-file: sessions with an idleTimeout or absoluteTimeout are signed with a random per-process key, so they do not survive a restart or span replicas",
  );
}

/** The environment a `--workers` child needs to sign with this process's key. */
export function workerSessionKeyEnv(): Record<string, string> {
  return { [WORKER_SESSION_KEY_ENV]: Buffer.from(sessionKeys().current).toString("base64") };
}
