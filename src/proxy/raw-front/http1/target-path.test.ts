import { expect, test } from "bun:test";
import { isUtf8, routingTarget } from "./target-path.ts";

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

// Bun.serve reads the target as UTF-8 and makes each byte sequence that is not into U+FFFD, which
// request-target.ts refuses: these must be refused here too, or the fronts would differ.
test.each([
  "/\u00ff",
  "/a?q=\u0080",
  "/\u00e2\u0082",
  "/\u00ed\u00a0\u0080",
  "/\u00c0\u00af",
  "/\u00f4\u0090\u0080\u0080",
])("%j (not UTF-8) is refused", (raw) => {
  expect(routingTarget(raw)).toBeUndefined();
});

test("U+FFFD itself, raw or encoded, is refused: Bun.serve's reading of bytes that are not UTF-8", () => {
  for (const raw of ["/\u00ef\u00bf\u00bd", "/%EF%BF%BD", "/x?q=%ef%Bf%bD"])
    expect(routingTarget(raw)).toBeUndefined();
});

test("isUtf8 agrees with a fatal TextDecoder (the WHATWG decoder Bun.serve's matches) on random bytes", () => {
  const fatal = new TextDecoder("utf-8", { fatal: true });
  let seed = 7;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed >>> 16;
  };
  for (let n = 0; n < 20_000; n++) {
    const bytes = Buffer.from(
      Array.from({ length: 1 + (next() % 6) }, () =>
        next() % 3 === 0 ? next() % 128 : 128 + (next() % 128),
      ),
    );
    let valid = true;
    try {
      fatal.decode(bytes);
    } catch {
      valid = false;
    }
    expect([bytes.toString("hex"), isUtf8(bytes.toString("latin1"))]).toEqual([bytes.toString("hex"), valid]);
  }
});
