import { expect, test } from "bun:test";
import { ConnectionAdmission, type RefusalReason } from "./admission.ts";

test("caps per peer and in total; released connections make room; refusals are told", () => {
  const refused: RefusalReason[] = [];
  const a = new ConnectionAdmission(3, 2, (r) => refused.push(r));
  expect([a.admit("p"), a.admit("p"), a.admit("p")]).toEqual([true, true, false]);
  expect([a.admit("q"), a.admit("r")]).toEqual([true, false]);
  a.release("p");
  expect(a.admit("r")).toBe(true);
  expect(refused).toEqual(["per_peer", "total"]);
});

test("0 means no cap", () => {
  const a = new ConnectionAdmission(0, 0);
  for (let i = 0; i < 10_000; i++) expect(a.admit("p")).toBe(true);
});
