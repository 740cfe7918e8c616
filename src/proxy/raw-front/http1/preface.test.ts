import { expect, test } from "bun:test";
import { matchPreface, NOT_PREFACE, PREFACE, PREFACE_SO_FAR, PREFACE_WHOLE } from "./preface.ts";

const at = (s: string) => {
  const b = Buffer.from(`xx${s}`, "latin1");
  return matchPreface(b, 2, b.length);
};

test("the whole preface, alone or followed by frames", () => {
  expect(at(PREFACE.toString("latin1"))).toBe(PREFACE_WHOLE);
  expect(at(`${PREFACE.toString("latin1")}\x00\x00\x00\x04`)).toBe(PREFACE_WHOLE);
});

test("a beginning of the preface waits for more, wherever a read splits it", () => {
  for (let i = 1; i < PREFACE.length; i++)
    expect(at(PREFACE.toString("latin1").slice(0, i))).toBe(PREFACE_SO_FAR);
});

test("HTTP/1.1 requests, including ones that start like the preface, are not it", () => {
  expect(at("GET / HTTP/1.1\r\n")).toBe(NOT_PREFACE);
  expect(at("POST / HTTP/1.1\r\n")).toBe(NOT_PREFACE);
  expect(at("PRI * HTTP/1.1\r\n\r\n")).toBe(NOT_PREFACE);
  expect(at("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n")).toBe(NOT_PREFACE);
});
