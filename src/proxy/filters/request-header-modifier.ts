/**
 * Gateway API RequestHeaderModifier on the headers going upstream. `Host` is not a plain header here:
 * the forwarder sends `ctx.host`, so a `set` of `host` updates that (a `remove` of it is ignored:
 * HTTP/1.1 requires one).
 */
import type { RequestHeaderModifierFilter } from "../../model/index.ts";
import type { CompiledFilter } from "./filter-types.ts";
import { compileHeaderEdits } from "./header-edits.ts";

export function compileRequestHeaderModifier(f: RequestHeaderModifierFilter): CompiledFilter {
  const hostSet = f.edits.set.find((h) => h.name === "host")?.value;
  const apply = compileHeaderEdits({
    set: f.edits.set.filter((h) => h.name !== "host"),
    add: f.edits.add.filter((h) => h.name !== "host"),
    remove: f.edits.remove.filter((n) => n !== "host"),
  });
  return {
    request: (ctx) => {
      apply(ctx.headers);
      if (hostSet !== undefined) ctx.host = hostSet;
      return undefined;
    },
  };
}
