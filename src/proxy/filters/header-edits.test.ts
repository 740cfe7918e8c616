import { expect, test } from "bun:test";
import type { RequestContext } from "./filter-types.ts";
import { compileHeaderEdits } from "./header-edits.ts";
import { compileRequestHeaderModifier } from "./request-header-modifier.ts";

test("set replaces, add appends, remove deletes", () => {
  const h = new Headers({ a: "1", b: "2", c: "3" });
  compileHeaderEdits({
    set: [{ name: "a", value: "one" }],
    add: [
      { name: "b", value: "two" },
      { name: "d", value: "4" },
    ],
    remove: ["c"],
  })(h);
  expect(Object.fromEntries(h)).toEqual({ a: "one", b: "2,two", d: "4" });
});

test("setting host on the request changes the Host sent upstream", () => {
  const headers = new Headers();
  const ctx = { headers, host: "orig" } as unknown as RequestContext;
  compileRequestHeaderModifier({
    kind: "RequestHeaderModifier",
    edits: { set: [{ name: "host", value: "new.example" }], add: [], remove: ["host"] },
  }).request?.(ctx);
  expect(ctx.host).toBe("new.example");
  expect(headers.get("host")).toBeNull();
});

test("add keeps Set-Cookie values as separate field lines", () => {
  const h = new Headers([["set-cookie", "a=1"]]);
  compileHeaderEdits({ set: [], add: [{ name: "set-cookie", value: "b=2" }], remove: [] })(h);
  expect(h.getSetCookie()).toEqual(["a=1", "b=2"]);
});
