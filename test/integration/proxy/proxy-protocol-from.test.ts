/**
 * `--proxy-protocol-from` (raw front): the L4 balancer may send PROXY headers without being one of
 * `--trusted-proxies`, so on a listener it reaches without PROXY its (the client's own) X-Forwarded-For
 * is not believed. And `--proxy-protocol` naming a port no listener has is warned about, once per change.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { freePort } from "../../helpers/ports.ts";
import { echoed, gatewayModel, send, TRUSTED, v1 } from "./client-identity-harness.ts";

describe("--proxy-protocol-from on the raw front", () => {
  let up: TestUpstream;
  let gw: GatewayServer;
  let proxied: number;
  let plain: number;
  let unmatched: number;
  const warnings: { msg: string; ports?: string }[] = [];
  let restoreSink: ((line: string) => void) | undefined;
  const both = () => {
    const a = gatewayModel(up.port, false, { name: "test/proxied", port: proxied });
    const b = gatewayModel(up.port, false, { name: "test/plain", port: plain });
    return { ...a, listeners: [...a.listeners, ...b.listeners] };
  };

  beforeAll(async () => {
    restoreSink = setLogSink((line) => {
      const entry = JSON.parse(line) as { level: string; msg: string; ports?: string };
      if (entry.level === "warn") warnings.push(entry);
    });
    up = startUpstream("up");
    [proxied, plain, unmatched] = [await freePort(), await freePort(), await freePort()];
    gw = new GatewayServer({
      bind: "127.0.0.1",
      front: "raw",
      proxyProtocol: [proxied, unmatched],
      proxyProtocolFrom: [`${TRUSTED}/32`],
    });
    await gw.apply(both());
  });

  afterAll(async () => {
    await gw.stop();
    await up.stop();
    if (restoreSink) setLogSink(restoreSink);
  });

  test("the balancer's PROXY header names the client on the PROXY listener", async () => {
    const got = echoed(await send({ port: proxied, path: "/p", from: TRUSTED, preamble: v1("203.0.113.7") }));
    expect(got.headers["x-forwarded-for"]).toBe("203.0.113.7");
  });

  test("on a listener without PROXY, the balancer's X-Forwarded-For is not believed", async () => {
    const got = echoed(await send({ port: plain, path: "/p", from: TRUSTED, xff: "10.1.2.3" }));
    expect(got.headers["x-forwarded-for"]).toBe(TRUSTED);
  });

  test("a --proxy-protocol port no listener has is warned about at apply, once while unchanged", async () => {
    const named = () =>
      warnings.filter((w) => w.msg.startsWith("--proxy-protocol names ports") && w.ports === `${unmatched}`);
    expect(named().length).toBe(1);
    await gw.apply(both());
    expect(named().length).toBe(1);
  });
});

describe("--proxy-protocol-from instead of --trusted-proxies", () => {
  test("either list lets --proxy-protocol start; neither is refused", () => {
    const start = (o: { trustedProxies?: string[]; proxyProtocolFrom?: string[] }) => () =>
      new GatewayServer({ bind: "127.0.0.1", front: "raw", proxyProtocol: "all", ...o });
    expect(start({ proxyProtocolFrom: ["10.0.0.0/8"] })).not.toThrow();
    expect(start({ trustedProxies: ["10.0.0.0/8"] })).not.toThrow();
    expect(start({})).toThrow("--proxy-protocol needs --proxy-protocol-from (or --trusted-proxies)");
  });
});
