import { expect, test } from "bun:test";
import { grpcTimeoutMs } from "./timeout.ts";

test("grpc-timeout values: every unit, rounded up to whole ms; malformed ones are ignored", () => {
  expect(["1H", "2M", "3S", "250m", "1500u", "10n", "0m", "99999999S"].map(grpcTimeoutMs)).toEqual([
    3_600_000, 120_000, 3000, 250, 2, 1, 1, 99_999_999_000,
  ]);
  for (const bad of [null, "", "5", "5s", "1.5S", "-1S", "123456789S", " 5S"])
    expect(grpcTimeoutMs(bad)).toBeUndefined();
});
