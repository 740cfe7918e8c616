/** `set`, then `add`, then `remove`, as one function over a Headers object. */
import type { HeaderEdits } from "../../model/types.ts";

export function compileHeaderEdits(edits: HeaderEdits): (headers: Headers) => void {
  const set = edits.set.map((h) => [h.name, h.value] as const);
  const add = edits.add.map((h) => [h.name, h.value] as const);
  const remove = [...edits.remove];
  return (headers) => {
    for (const [n, v] of set) headers.set(n, v);
    for (const [n, v] of add) headers.append(n, v);
    for (const n of remove) headers.delete(n);
  };
}
