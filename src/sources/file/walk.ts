import { readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";

/** The YAML files under a folder, and the sub-folders that could not be listed. */
export interface FolderListing {
  /** Paths (`dir` joined with the relative path), sorted by relative path so loads are reproducible. */
  readonly files: readonly string[];
  readonly unreadableDirs: readonly { readonly path: string; readonly reason: string }[];
}

export function isYamlName(name: string): boolean {
  return name.endsWith(".yaml") || name.endsWith(".yml");
}

/**
 * List `*.yaml`/`*.yml` under `dir`, recursively, skipping dot-files and dot-folders (editor swap files,
 * `.git`). Symlinks are followed: a ConfigMap mounted as a volume is a set of symlinks into a hidden
 * `..data/` folder, and those are exactly the files to read. Throws only when `dir` itself is unreadable.
 */
export async function listYamlFiles(dir: string): Promise<FolderListing> {
  const found: [rel: string, abs: string][] = [];
  const unreadableDirs: { path: string; reason: string }[] = [];
  const seen = new Set<string>([await realpath(dir)]);
  const walk = async (abs: string, rel: string, root: boolean): Promise<void> => {
    let names: string[];
    try {
      names = (await readdir(abs)).filter((n) => !n.startsWith("."));
    } catch (err) {
      if (root) throw err;
      unreadableDirs.push({ path: abs, reason: (err as Error).message });
      return;
    }
    for (const name of names) {
      const childAbs = join(abs, name);
      const childRel = rel ? `${rel}/${name}` : name;
      const info = await stat(childAbs).catch(() => undefined); // dangling symlink or gone meanwhile
      if (info?.isFile() && isYamlName(name)) found.push([childRel, childAbs]);
      else if (info?.isDirectory()) {
        const real = await realpath(childAbs).catch(() => childAbs);
        if (seen.has(real)) continue; // a symlink loop, or a folder reached twice
        seen.add(real);
        await walk(childAbs, childRel, false);
      }
    }
  };
  await walk(dir, "", true);
  // Plain code-unit order of the relative path, independent of locale and of readdir's order.
  found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { files: found.map(([, abs]) => abs), unreadableDirs };
}

/**
 * A cheap fingerprint of the folder for polling: every YAML file's path, inode, size and mtime (an
 * atomic save changes the inode even when size and mtime look the same). `missing` when the folder is gone.
 */
export async function folderFingerprint(dir: string): Promise<string> {
  try {
    const { files } = await listYamlFiles(dir);
    const parts = await Promise.all(
      files.map(async (f) => {
        const s = await stat(f).catch(() => undefined);
        return s ? `${f}:${s.ino}:${s.size}:${s.mtimeMs}` : `${f}:gone`;
      }),
    );
    return parts.join("\n");
  } catch {
    return "missing";
  }
}
