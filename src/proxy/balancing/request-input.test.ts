import { describe, expect, test } from "bun:test";
import type { HashKeyPart } from "../../model/index.ts";
import { balanceInput, cookieValue, hashKeyOf, queryValue } from "./request-input.ts";

describe("cookieValue", () => {
  test("finds a cookie among others, by exact name", () => {
    expect(cookieValue("a=1; route=abc; b=2", "route")).toBe("abc");
    expect(cookieValue("xroute=1; route=2", "route")).toBe("2");
    expect(cookieValue("route=", "route")).toBe("");
    expect(cookieValue("a=1", "route")).toBeNull();
    expect(cookieValue(null, "route")).toBeNull();
  });

  test("reads fields joined from repeated Cookie headers", () => {
    expect(cookieValue("a=1, route=x", "route")).toBe("x");
  });
});

describe("queryValue", () => {
  test("the first raw value of a parameter", () => {
    expect(queryValue("?a=1&user=j%20d&user=2", "user")).toBe("j%20d");
    expect(queryValue("?users=1", "user")).toBeNull();
    expect(queryValue("?user", "user")).toBe("");
    expect(queryValue("", "user")).toBeNull();
  });
});

describe("hashKeyOf", () => {
  const input = balanceInput(
    new Headers({ "x-tenant": "acme", cookie: "sid=42" }),
    "/p",
    "?u=7",
    "192.0.2.1",
    false,
  );
  const key = (parts: HashKeyPart[]) => hashKeyOf(parts, input);

  test("joins every kind of part in order", () => {
    expect(
      key([
        { kind: "Header", name: "x-tenant" },
        { kind: "Text", value: "-" },
        { kind: "Cookie", name: "sid" },
        { kind: "Text", value: "-" },
        { kind: "Query", name: "u" },
        { kind: "ClientIP" },
        { kind: "RequestURI" },
      ]),
    ).toBe("acme-42-7192.0.2.1/p?u=7");
  });

  test("undefined when no request value is present: text alone names no client", () => {
    expect(
      key([
        { kind: "Text", value: "x" },
        { kind: "Header", name: "x-missing" },
      ]),
    ).toBeUndefined();
  });
});
