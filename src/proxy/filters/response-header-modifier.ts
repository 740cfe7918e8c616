/** Gateway API ResponseHeaderModifier on every response the route sends (upstream or generated). */
import type { ResponseHeaderModifierFilter } from "../../model/index.ts";
import type { CompiledFilter } from "./filter-types.ts";
import { compileHeaderEdits } from "./header-edits.ts";

export function compileResponseHeaderModifier(f: ResponseHeaderModifierFilter): CompiledFilter {
  const apply = compileHeaderEdits(f.edits);
  return { response: (_req, headers) => apply(headers) };
}
