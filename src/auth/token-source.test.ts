import { expect, test } from "bun:test";
import type { TokenSource } from "../model/index.ts";
import { cookieValue, extractToken } from "./token-source.ts";

const bearer: TokenSource = { type: "Header", name: "authorization", prefix: "Bearer " };

test("Authorization: Bearer, scheme case-insensitive; other schemes are no token", () => {
  expect(extractToken([bearer], new Headers({ authorization: "bearer abc" }), "")).toBe("abc");
  expect(extractToken([bearer], new Headers({ authorization: "Basic abc" }), "")).toBeUndefined();
  expect(extractToken([bearer], new Headers({ authorization: "Bearer " }), "")).toBeUndefined();
});

test("sources in order; query parameter only when configured", () => {
  const sources: TokenSource[] = [
    bearer,
    { type: "Cookie", name: "tok" },
    { type: "QueryParameter", name: "t" },
  ];
  expect(extractToken(sources, new Headers({ cookie: "a=1; tok=xyz" }), "t=q")).toBe("xyz");
  expect(extractToken(sources, new Headers(), "a=1&t=q")).toBe("q");
  expect(extractToken([bearer], new Headers(), "t=q&access_token=q")).toBeUndefined();
});

test("cookieValue finds the exact name and unquotes", () => {
  expect(cookieValue('x_tok=1; tok="v"', "tok")).toBe("v");
  expect(cookieValue("tokx=1", "tok")).toBeUndefined();
  expect(cookieValue(null, "tok")).toBeUndefined();
});
