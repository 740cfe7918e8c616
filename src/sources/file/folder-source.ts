import { type FSWatcher, watch } from "node:fs";
import { stat } from "node:fs/promises";
import { CappedDebounce } from "../debounce.ts";
import { FirstSeen } from "../skipped.ts";
import type { FileMemory, FolderLoad } from "./assemble.ts";
import { fileSourceLog as log, logLoad, type ParseCache, readFolder } from "./load.ts";
import { folderFingerprint } from "./walk.ts";

export interface FolderSourceOptions {
  /** Quiet time after the last change before the folder is re-read (latest wins). Default 100 ms. */
  readonly debounceMs?: number;
  /** Interval of the polling fallback. Default 1000 ms. */
  readonly pollMs?: number;
  /** Poll instead of using `fs.watch` (for file systems without change events, and for tests). */
  readonly usePolling?: boolean;
}

/**
 * A folder of YAML kept in sync: read once on `start`, then re-read as a whole after each burst of
 * changes and delivered to `onSnapshot` (every re-read is delivered, even an unchanged one, so callers
 * can tell a reload happened). The last-good rules of `mergeFile` apply from one read to the next.
 *
 * Change detection: `fs.watch(dir, { recursive: true })`; every event counts, whatever the file name,
 * because editors save through temporary files and renames and a mounted ConfigMap swaps a hidden
 * `..data` symlink. When watching fails, or the folder is deleted or replaced (the watch then points at
 * a dead inode), it polls a fingerprint of the folder every `pollMs` and watches again once it can.
 * A read that fails (folder gone, permissions) is logged and the last snapshot keeps serving.
 */
export class FolderSource {
  readonly #dir: string;
  readonly #onSnapshot: (load: FolderLoad) => void;
  readonly #pollMs: number;
  readonly #usePolling: boolean;
  #memory: FileMemory = new Map();
  readonly #parsed: ParseCache = new Map();
  /** Skipped Gateway API objects already logged (each is logged once while it stays). */
  readonly #skippedSeen = new FirstSeen();
  #watcher: FSWatcher | undefined;
  #watchedIno: number | undefined;
  #poller: ReturnType<typeof setInterval> | undefined;
  #fingerprint = "";
  readonly #debounce: CappedDebounce;
  #reading = false;
  #dirty = false;
  #stopped = false;

  constructor(dir: string, onSnapshot: (load: FolderLoad) => void, options: FolderSourceOptions = {}) {
    this.#dir = dir;
    this.#onSnapshot = onSnapshot;
    this.#debounce = new CappedDebounce(options.debounceMs ?? 100, () => void this.#reload());
    this.#pollMs = options.pollMs ?? 1000;
    this.#usePolling = options.usePolling ?? false;
  }

  /** First read (also delivered to `onSnapshot`), then watching. Rejects if the folder cannot be read. */
  async start(): Promise<FolderLoad> {
    // Watch before reading, so a change made during the first read is not missed.
    if (!(await stat(this.#dir)).isDirectory()) throw new Error(`${this.#dir} is not a folder`);
    await this.#ensureWatching();
    const { load, memory } = await readFolder(this.#dir, new Map(), this.#parsed);
    this.#memory = memory;
    logLoad(load, undefined, this.#skippedSeen);
    this.#onSnapshot(load);
    return load;
  }

  stop(): void {
    this.#stopped = true;
    this.#watcher?.close();
    this.#watcher = undefined;
    clearInterval(this.#poller);
    this.#debounce.cancel();
  }

  /** A change seen: re-read after the burst (see CappedDebounce). */
  #changed(): void {
    if (!this.#stopped) this.#debounce.trigger();
  }

  /** One re-read at a time; changes seen during a read cause one more read after it. */
  async #reload(): Promise<void> {
    if (this.#reading) {
      this.#dirty = true;
      return;
    }
    this.#reading = true;
    try {
      const { load, memory } = await readFolder(this.#dir, this.#memory, this.#parsed);
      if (this.#stopped) return;
      this.#memory = memory;
      logLoad(load, undefined, this.#skippedSeen);
      this.#onSnapshot(load);
    } catch (err) {
      log.error("cannot read the folder; the last configuration keeps serving", {
        dir: this.#dir,
        error: err as Error,
      });
    } finally {
      this.#reading = false;
      await this.#ensureWatching();
      if (this.#dirty) {
        this.#dirty = false;
        this.#changed();
      }
    }
  }

  /**
   * Keep a live watch on the folder as it is now. If it cannot be watched (gone, replaced, or fs.watch
   * unsupported), poll; the poller calls back here and returns to watching when it can.
   */
  async #ensureWatching(): Promise<void> {
    if (this.#stopped) return;
    if (this.#usePolling) return this.#startPolling();
    const ino = await stat(this.#dir).then(
      (s) => (s.isDirectory() ? s.ino : undefined),
      () => undefined,
    );
    if (ino !== undefined && this.#watcher && ino === this.#watchedIno) return;
    this.#watcher?.close();
    this.#watcher = undefined;
    if (ino !== undefined) {
      try {
        this.#watcher = watch(this.#dir, { recursive: true }, () => this.#changed());
        this.#watcher.on("error", (err) => {
          log.warn("watching the folder failed; polling it instead", { dir: this.#dir, error: err });
          this.#watcher?.close();
          this.#watcher = undefined;
          void this.#startPolling();
        });
        this.#watchedIno = ino;
        clearInterval(this.#poller);
        this.#poller = undefined;
        return;
      } catch (err) {
        log.warn("cannot watch the folder; polling it instead", { dir: this.#dir, error: err as Error });
      }
    }
    await this.#startPolling();
  }

  /**
   * The baseline fingerprint is taken before this resolves: start() reads the folder after it, so a
   * change made once start() returned always differs from the baseline (it was missed when the baseline
   * was taken in the background and landed after such a change).
   */
  async #startPolling(): Promise<void> {
    if (this.#poller || this.#stopped) return;
    this.#poller = setInterval(() => void this.#poll(), this.#pollMs);
    // A poll tick that beats the baseline at worst causes one extra re-read; a change is never missed.
    this.#fingerprint = await folderFingerprint(this.#dir);
  }

  async #poll(): Promise<void> {
    const fingerprint = await folderFingerprint(this.#dir);
    if (this.#stopped || fingerprint === this.#fingerprint) return;
    this.#fingerprint = fingerprint;
    if (!this.#usePolling && fingerprint !== "missing") await this.#ensureWatching(); // stops the poller
    this.#changed();
  }
}
