import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setLogSink } from "../../observability/logger.ts";
import type { FolderLoad } from "./assemble.ts";
import { FolderSource, type FolderSourceOptions } from "./folder-source.ts";

const svc = (name: string, label = "x") =>
  `apiVersion: v1\nkind: Service\nmetadata: { name: ${name}, labels: { v: "${label}" } }\nspec: { ports: [{ port: 80 }] }\n`;
const summary = (load: FolderLoad | undefined) =>
  load?.snapshot.services.map((s) => `${s.metadata.name}:${s.metadata.labels?.v}`).join(",");

const logs: string[] = [];
const restore = setLogSink((line) => logs.push(line));
afterAll(() => setLogSink(restore));

let dir: string;
let source: FolderSource | undefined;
let loads: FolderLoad[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "gatehouse-watch-"));
  loads = [];
  logs.length = 0;
});
afterEach(async () => {
  source?.stop();
  source = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function startSource(options: FolderSourceOptions = { debounceMs: 20 }): Promise<FolderLoad> {
  source = new FolderSource(dir, (load) => loads.push(load), options);
  return source.start();
}

/** Wait until the latest delivered load satisfies `ok` (fails the test after `ms`). */
async function until(ok: (load: FolderLoad | undefined) => boolean, ms = 3000): Promise<FolderLoad> {
  const deadline = Date.now() + ms;
  while (!ok(loads.at(-1))) {
    if (Date.now() > deadline) throw new Error(`timed out; last load: ${summary(loads.at(-1))}`);
    await Bun.sleep(10);
  }
  return loads.at(-1) as FolderLoad;
}

describe("FolderSource", () => {
  test("start delivers the first load and returns it", async () => {
    await writeFile(join(dir, "a.yaml"), svc("a"));
    const first = await startSource();
    expect(summary(first)).toBe("a:x");
    expect(loads).toEqual([first]);
  });

  test("an atomic save (write a temp file, rename over) is picked up", async () => {
    await writeFile(join(dir, "a.yaml"), svc("a", "1"));
    await startSource();
    await writeFile(join(dir, ".a.yaml.swp"), svc("a", "2"));
    await rename(join(dir, ".a.yaml.swp"), join(dir, "a.yaml"));
    await until((l) => summary(l) === "a:2");
  });

  test("a burst of writes is debounced into few reloads, and the last content wins", async () => {
    await writeFile(join(dir, "a.yaml"), svc("a", "0"));
    await startSource({ debounceMs: 100 });
    for (let i = 1; i <= 10; i++) await writeFile(join(dir, "a.yaml"), svc("a", String(i)));
    await until((l) => summary(l) === "a:10");
    await Bun.sleep(200); // nothing more arrives after the burst settled
    expect(summary(loads.at(-1))).toBe("a:10");
    // Ten writes; without debouncing each would reload. A loaded machine can stretch the burst past a
    // debounce window or two, so "few" allows some slack.
    expect(loads.length - 1).toBeLessThanOrEqual(5);
  });

  test("a syntax error keeps the last good objects; fixing it serves the new ones", async () => {
    await writeFile(join(dir, "a.yaml"), svc("a", "good"));
    await startSource();
    await writeFile(join(dir, "a.yaml"), "kind: Service\nmetadata: [oops\n");
    const broken = await until((l) => (l?.errors.length ?? 0) > 0);
    expect(summary(broken)).toBe("a:good");
    expect(broken.errors[0]).toMatchObject({ file: join(dir, "a.yaml"), docIndex: -1 });
    expect(logs.some((l) => l.includes('"level":"warn"') && l.includes("a.yaml"))).toBe(true);
    await writeFile(join(dir, "a.yaml"), svc("a", "fixed"));
    await until((l) => summary(l) === "a:fixed" && l?.errors.length === 0);
  });

  test("new files in new sub-folders are picked up; a deleted file's objects go away", async () => {
    await writeFile(join(dir, "a.yaml"), svc("a"));
    await startSource();
    await mkdir(join(dir, "sub"));
    await writeFile(join(dir, "sub", "b.yaml"), svc("b"));
    await until((l) => summary(l) === "a:x,b:x");
    await rm(join(dir, "a.yaml"));
    await until((l) => summary(l) === "b:x");
  });

  test("polling mode sees changes too", async () => {
    await writeFile(join(dir, "a.yaml"), svc("a", "1"));
    await startSource({ debounceMs: 10, pollMs: 30, usePolling: true });
    await writeFile(join(dir, "a.yaml"), svc("a", "22")); // size changes, so even coarse mtimes differ
    await until((l) => summary(l) === "a:22");
    await writeFile(join(dir, "b.yaml"), svc("b"));
    await until((l) => summary(l) === "a:22,b:x");
  });

  test("a deleted folder is logged, keeps the last snapshot, and is picked up again when it returns", async () => {
    await writeFile(join(dir, "a.yaml"), svc("a"));
    await startSource({ debounceMs: 10, pollMs: 30 });
    await rm(dir, { recursive: true });
    const deadline = Date.now() + 3000;
    while (!logs.some((l) => l.includes("cannot read the folder"))) {
      if (Date.now() > deadline) throw new Error("no log line about the missing folder");
      await Bun.sleep(10);
    }
    expect(summary(loads.at(-1))).toBe("a:x"); // nothing delivered in between
    await mkdir(dir);
    await writeFile(join(dir, "b.yaml"), svc("b"));
    // A returning folder is found by polling for it; on a busy machine (CI beside other work) that has
    // taken over 3 s, so these two waits allow more.
    await until((l) => summary(l) === "b:x", 10_000);
    // And it keeps following the new folder.
    await writeFile(join(dir, "c.yaml"), svc("c"));
    await until((l) => summary(l) === "b:x,c:x", 10_000);
  }, 25_000);

  test("start rejects when the folder does not exist; stop ends deliveries", async () => {
    await expect(new FolderSource(join(dir, "nope"), () => {}).start()).rejects.toThrow();
    await startSource();
    source?.stop();
    const count = loads.length;
    await writeFile(join(dir, "late.yaml"), svc("late"));
    await Bun.sleep(100);
    expect(loads.length).toBe(count);
  });
});
