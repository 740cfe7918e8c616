import { expect, test } from "bun:test";
import { compilePathModifier, modifyPath } from "./path-modifier.ts";

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

// ingress-nginx's rewrite-target: the whole path becomes the target with the groups of the path regex.
test.each([
  ["/something/new/x", "/$2", "/new/x"],
  ["/something", "/$2", "/"],
  ["/SOMETHING/a", "/$2", "/a"],
  ["/something/a", "$2", "/a"],
  ["/something/a", "/v1/$2/$9", "/v1/a/"],
  ["/something/a", "/fixed", "/fixed"],
])("RegexSubstitute %s with target %s → %s", (path, value, want) => {
  const m = compilePathModifier({
    type: "RegexSubstitute",
    value,
    pattern: "(?:/something(/|$)(.*))[\\s\\S]*",
    ignoreCase: true,
  });
  expect(modifyPath(path, "", m)).toBe(want);
});

test("RegexSubstitute on a path its pattern does not take leaves it as it is", () => {
  const m = compilePathModifier({ type: "RegexSubstitute", value: "/$1", pattern: "/a/(.*)" });
  expect(modifyPath("/b/c", "", m)).toBe("/b/c");
});
