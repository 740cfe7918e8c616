import { expect, test } from "bun:test";
import { unenforcedOnBunFront, unmatchedProxyProtocolPorts } from "./front-settings.ts";

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

test("the --proxy-protocol ports no listener has, in the order given; all and none name none", () => {
  expect(unmatchedProxyProtocolPorts([80, 8443, 443, 9], [80, 443, 443])).toEqual([8443, 9]);
  expect(unmatchedProxyProtocolPorts([80], [80])).toEqual([]);
  expect(unmatchedProxyProtocolPorts("all", [])).toEqual([]);
  expect(unmatchedProxyProtocolPorts("none", [])).toEqual([]);
  expect(unmatchedProxyProtocolPorts(undefined, [])).toEqual([]);
});
