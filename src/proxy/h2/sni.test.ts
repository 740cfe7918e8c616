import { expect, test } from "bun:test";
import { selfSigned } from "../testing/certs.ts";
import { buildSniTable, contextFor } from "./sni.ts";

test("exact names, then one-label wildcards, then the first certificate", () => {
  const a = selfSigned("a.example");
  const wild = { ...selfSigned("*.w.example"), hostnames: ["*.w.example"] };
  const table = buildSniTable("l", [a, wild, { ...selfSigned("a.example"), hostnames: ["a.example"] }]);
  const byName = (n: string | undefined) => contextFor(table, n);
  expect(byName("a.example")).toBe(table.exact.get("a.example") as never);
  expect(byName("A.Example")).toBe(byName("a.example")); // first certificate to claim a name wins
  expect(byName("x.w.example")).toBe(table.wildcard.get("w.example") as never);
  expect(byName("y.x.w.example")).toBe(table.fallback); // a wildcard covers one label
  expect(byName("w.example")).toBe(table.fallback);
  expect(byName(undefined)).toBe(table.fallback);
  expect(table.fallback).toBe(table.exact.get("a.example") as never);
});

test("an empty list or a broken pair throws (the listener is not opened)", () => {
  expect(() => buildSniTable("l", [])).toThrow("without certificates");
  const broken = { ...selfSigned("b.example"), keyPem: "-----BEGIN PRIVATE KEY-----\nnope" };
  expect(() => buildSniTable("l", [broken])).toThrow();
});
