/**
 * Gateway API URLRewrite: the Host and/or path sent upstream. The client's original Host stays in
 * X-Forwarded-Host. ReplacePrefixMatch uses the route's matched prefix (see path-modifier.ts).
 */
import type { URLRewriteFilter } from "../../model/index.ts";
import { compilePathModifier, modifyPath } from "../request/path-modifier.ts";
import type { CompiledFilter } from "./filter-types.ts";

export function compileURLRewrite(f: URLRewriteFilter): CompiledFilter {
  const hostname = f.hostname;
  const path = f.path === undefined ? undefined : compilePathModifier(f.path);
  return {
    request: (ctx) => {
      if (hostname !== undefined) ctx.host = hostname;
      if (path !== undefined) ctx.path = modifyPath(ctx.path, ctx.prefix, path);
      return undefined;
    },
  };
}
