/**
 * What the rules parser would have to read, checked before it runs (engine.ts): libmodsecurity's parser
 * is not for untrusted input of any kind, and some inputs end the process instead of failing.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * The `Include` globs of `directives` that name no readable file. libmodsecurity's rules parser ends the
 * whole process (flex's "input in flex scanner failed", exit 2) on some unreadable inputs, so nothing it
 * would have to read is left to it to discover: such a rule set is refused before the parser runs.
 */
export function unreadableIncludes(directives: string): string[] {
  const bad: string[] = [];
  for (const line of directives.split("\n")) {
    if (!line.startsWith("Include ")) continue;
    const pattern = line.slice("Include ".length).trim();
    const dir = dirname(pattern);
    const glob = new Bun.Glob(basename(pattern));
    // Every match a regular file (a directory among them is what the parser dies on), and at least one.
    let readable = false;
    try {
      const matches = readdirSync(dir).filter((f) => glob.match(f));
      readable = matches.length > 0 && matches.every((f) => statSync(join(dir, f)).isFile());
    } catch {
      readable = false;
    }
    if (!readable) bad.push(pattern);
  }
  return bad;
}
