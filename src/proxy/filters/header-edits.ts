/** `set`, then `add`, then `remove`, as one function over a Headers object. */
import type { HeaderEdits } from "../../model/index.ts";

export function compileHeaderEdits(edits: HeaderEdits): (headers: Headers) => void {
  const set = edits.set.map((h) => [h.name, h.value] as const);
  const add = edits.add.map((h) => [h.name, h.value] as const);
  const remove = [...edits.remove];
  return (headers) => {
    for (const [n, v] of set) headers.set(n, v);
    // Bun joins appended values with ", " and sends one field line either way; we join with "," so the
    // result is the same list as two field lines (RFC 9110 §5.3) and equals what the Gateway API
    // conformance suite expects. Set-Cookie must stay separate lines, so it keeps append().
    for (const [n, v] of add) {
      const cur = n === "set-cookie" ? null : headers.get(n);
      if (cur === null) headers.append(n, v);
      else headers.set(n, `${cur},${v}`);
    }
    for (const n of remove) headers.delete(n);
  };
}
