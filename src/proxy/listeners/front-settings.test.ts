import { expect, test } from "bun:test";
import {
  proxyProtocolFromWarning,
  unenforcedOnBunFront,
  unmatchedProxyProtocolPorts,
} from "./front-settings.ts";

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

test("PROXY on some ports with its senders left to --trusted-proxies is warned about, naming the fix", () => {
  const balancer = { trustedProxies: ["10.0.0.0/8"] };
  const warning = proxyProtocolFromWarning({ ...balancer, proxyProtocol: [443] });
  expect(warning).toContain("--proxy-protocol-from");
  expect(warning).toContain("take it out of --trusted-proxies");
  expect(warning).toContain("(443)");
  // Senders named, every port reads PROXY, or PROXY off: nothing to warn about.
  expect(
    proxyProtocolFromWarning({ ...balancer, proxyProtocol: [443], proxyProtocolFrom: ["10.1.0.0/16"] }),
  ).toBeUndefined();
  expect(proxyProtocolFromWarning({ ...balancer, proxyProtocol: "all" })).toBeUndefined();
  expect(proxyProtocolFromWarning({ ...balancer, proxyProtocol: "none" })).toBeUndefined();
  expect(proxyProtocolFromWarning({ ...balancer, proxyProtocol: [] })).toBeUndefined();
  expect(proxyProtocolFromWarning(balancer)).toBeUndefined();
});
