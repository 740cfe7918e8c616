import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type EchoServer, startEchoServer } from "../helpers/echo-server.ts";
import { type Dial, type Reply, send } from "./gateway-api-client.ts";
import type { Expected, RequestData } from "./gateway-api-data.ts";
import { checkReply } from "./gateway-api-expect.ts";

const req: RequestData = { method: "GET", host: null, path: "/one", headers: { "X-A": "1" } };
const exp: Expected = {
  statusCodes: [200],
  backend: "infra-backend-v1",
  namespace: "gateway-conformance-infra",
  backendRequest: {
    method: "GET",
    host: null,
    path: "/one",
    headers: { "X-A": "1" },
    absentHeaders: ["X-Gone"],
  },
};

/** The echo itself stands in for a gateway: every request reaches "infra-backend-v1". */
let echo: EchoServer;
let dial: Dial;
beforeAll(() => {
  echo = startEchoServer({ namespace: "gateway-conformance-infra", pod: "infra-backend-v1-local-0" });
  dial = {
    address: "127.0.0.1",
    target: { gateway: "ns/gw", port: echo.port, scheme: "http", protocol: "HTTP" },
    timeoutMs: 2000,
  };
});
afterAll(() => echo.stop());

describe("checkReply against a live echo", () => {
  test("a matching expectation passes; Host is the dialed address with its port", async () => {
    const reply = await send(dial, req);
    expect(checkReply(exp, req, reply)).toEqual([]);
    expect(JSON.parse(reply.body).host).toBe(`127.0.0.1:${echo.port}`);
  });

  test("deliberately broken expectations fail, each with its reason", async () => {
    const reply = await send(dial, req);
    const broken: [Partial<Expected>, string][] = [
      [{ statusCodes: [404] }, "status 200, want one of [404]"],
      [{ namespace: "other" }, 'backend namespace "gateway-conformance-infra", want "other"'],
      [{ backend: "infra-backend-v2" }, "answered by pod"],
      [
        { backendRequest: { ...(exp.backendRequest as Expected["backendRequest"] & object), path: "/two" } },
        "backend path",
      ],
      [
        { backendRequest: { method: "GET", host: null, path: "/one", headers: { "X-A": "2" } } },
        "backend header X-A",
      ],
      [
        { backendRequest: { method: "GET", host: null, path: "/one", headers: {}, absentHeaders: ["x-a"] } },
        "absent",
      ],
      [{ responseHeaders: { "X-Missing": "v" } }, "response header X-Missing missing"],
      [{ responseAbsentHeaders: ["Content-Type"] }, "should be absent"],
    ];
    for (const [change, reason] of broken) {
      const problems = checkReply({ ...exp, ...change }, req, reply);
      expect(problems.join("; ")).toContain(reason);
    }
  });

  test("X-Echo-Set-Header becomes response headers that responseHeaders can check", async () => {
    const withSet = { ...req, backendSetResponseHeaders: { "X-Out": "a", "X-Two": "b" } };
    const reply = await send(dial, withSet);
    expect(checkReply({ ...exp, responseHeaders: { "X-Out": "a", "X-Two": "b" } }, withSet, reply)).toEqual(
      [],
    );
    expect(checkReply({ ...exp, responseHeadersOneOf: { "X-Out": ["z", "a"] } }, withSet, reply)).toEqual([]);
  });
});

const reply = (status: number, headers: Record<string, string[]> = {}, url = "http://1.2.3.4/x"): Reply => ({
  status,
  headers,
  body: "",
  url,
});

describe("checkReply rules", () => {
  test("408 or 504 passes when either is expected", () => {
    expect(checkReply({ ...exp, statusCodes: [504] }, req, reply(408))).toEqual([]);
    expect(checkReply({ ...exp, statusCodes: [200] }, req, reply(504))).toHaveLength(1);
  });

  test("a non-JSON 200 captures empty path and namespace", () => {
    const cors: Expected = {
      statusCodes: [200],
      backend: null,
      namespace: "",
      backendRequest: { method: "GET", host: null, path: "", headers: {} },
    };
    expect(checkReply(cors, req, reply(200, { "content-type": ["text/plain"] }))).toEqual([]);
  });

  test("redirects: scheme, host, port (null = none or default) and path", () => {
    const redirect = { scheme: "https", host: "example.org", port: null, path: "/p" };
    const want: Expected = { statusCodes: [302], backend: null, namespace: "", redirect };
    expect(checkReply(want, req, reply(302, { location: ["https://example.org:443/p"] }))).toEqual([]);
    expect(checkReply(want, req, reply(302, { location: ["https://example.org:8443/p"] })).join()).toContain(
      "redirect port",
    );
    expect(checkReply(want, req, reply(302, { location: ["/p"] })).join()).toContain("redirect scheme http");
    const port = { ...want, redirect: { ...redirect, scheme: "http", host: null, port: "8080" } };
    expect(checkReply(port, req, reply(302, { location: ["http://1.2.3.4:8080/p"] }))).toEqual([]);
  });
});
