import { expect, test } from "bun:test";
import { routingTarget } from "./target-path.ts";

// What Bun.serve does to a target before routing, which the raw front must do the same way.
test.each([
  ["/a/b?q=1", "/a/b", "?q=1"],
  ["/a/./b/../c", "/a/c", ""],
  ["/a/%2e%2E/b", "/b", ""],
  ["/a/.%2e/b", "/b", ""],
  ["/../../x", "/x", ""],
  ["/a\\..\\b", "/b", ""],
  ["/a/..?x=/../", "/", "?x=/../"],
  ["/caf\u00c3\u00a9", "/caf%C3%A9", ""],
  ["http://evil.example/p?q", "/p", "?q"],
  ["HTTP://h", "/", ""],
  ["/%61dmin", "/admin", ""],
])("%s → %s %s", (raw, path, query) => {
  expect(routingTarget(raw)).toEqual({ path, query });
});

test.each(["*", "h:443", "/a%2fb", "/a%5cb", "/a%00", "/%zz", "/a#f", "/x#/../../admin", "/x?q#/../a"])(
  "%s is refused",
  (raw) => {
    expect(routingTarget(raw)).toBeUndefined();
  },
);
