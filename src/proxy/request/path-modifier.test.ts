import { expect, test } from "bun:test";
import { modifyPath } from "./path-modifier.ts";

// The table from the Gateway API HTTPPathModifier documentation (prefix already without trailing slash).
test.each([
  ["/foo/bar", "/foo", "/xyz", "/xyz/bar"],
  ["/foo/bar", "/foo", "/xyz/", "/xyz/bar"],
  ["/foo", "/foo", "/xyz", "/xyz"],
  ["/foo/", "/foo", "/xyz", "/xyz/"],
  ["/foo/bar", "/foo", "", "/bar"],
  ["/foo/", "/foo", "", "/"],
  ["/foo", "/foo", "", "/"],
  ["/foo/", "/foo", "/", "/"],
  ["/foo", "/foo", "/", "/"],
  ["/foo/x", "/foo", "/", "/x"],
  ["/x/y", "", "/bar", "/bar/x/y"],
])("ReplacePrefixMatch %s with prefix %s and value %s → %s", (path, prefix, value, want) => {
  expect(modifyPath(path, prefix, { full: false, value })).toBe(want);
});

test("ReplaceFullPath ignores the prefix", () => {
  expect(modifyPath("/foo/bar", "/foo", { full: true, value: "/new" })).toBe("/new");
});
