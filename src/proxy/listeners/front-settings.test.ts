import { expect, test } from "bun:test";
import { unenforcedOnBunFront } from "./front-settings.ts";

test("names each raw-front-only setting that is set, and none left at its default", () => {
  expect(unenforcedOnBunFront({}, 16_384)).toEqual([]);
  expect(unenforcedOnBunFront({ maxConnections: 16_384, maxConnectionsPerPeer: 0 }, 16_384)).toEqual([]);
  expect(
    unenforcedOnBunFront(
      { sharedTlsPorts: true, maxConnections: 100, maxConnectionsPerPeer: 5, upstreamReadTimeoutMs: 1000 },
      16_384,
    ),
  ).toEqual([
    "--enable-ssl-passthrough",
    "--max-connections",
    "--max-connections-per-peer",
    "--upstream-read-timeout-ms",
  ]);
});
