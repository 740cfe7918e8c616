import { afterEach, expect, test } from "bun:test";
import { generatedResponse } from "../raw-front/http1/head-to-client.ts";
import { errorResponse, madeByGateway } from "../request/responses.ts";
import { ownErrorBody, useOwnErrorBodies } from "./own-bodies.ts";

afterEach(() => useOwnErrorBodies(undefined));

const PAGE = "<p>introuvable — 404</p>";

test("both fronts' error builders send the operator's body for a configured code, plain text otherwise", async () => {
  useOwnErrorBodies({ "404": { contentType: "text/html; charset=utf-8", body: PAGE } });
  const res = errorResponse(404, "gatehouse");
  expect(madeByGateway(res)).toBe(true);
  expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(await res.text()).toBe(PAGE);
  const wire = generatedResponse(404, "gatehouse", true);
  const split = wire.indexOf("\r\n\r\n");
  const head = wire.subarray(0, split).toString("latin1");
  expect(head).toStartWith("HTTP/1.1 404 Not Found\r\n");
  expect(head).toContain("content-type: text/html; charset=utf-8");
  expect(head).toContain(`content-length: ${Buffer.byteLength(PAGE)}`);
  expect(head).toContain("connection: close");
  expect(wire.subarray(split + 4).toString("utf8")).toBe(PAGE);
  // 503 has no body configured: the plain-text one.
  expect(await errorResponse(503, "gatehouse").text()).toBe("Service Unavailable\n");
  expect(generatedResponse(503, "gatehouse", false).toString("latin1")).toEndWith(
    "\r\n\r\nService Unavailable\n",
  );
});

test("route response filters still run on an operator's body (raw front)", () => {
  useOwnErrorBodies({ "502": { contentType: "application/json", body: "{}" } });
  const wire = generatedResponse(502, "gatehouse", false, [(_req, h) => h.set("x-added", "yes")]).toString(
    "latin1",
  );
  expect(wire).toContain("x-added: yes");
  expect(wire).toEndWith("\r\n\r\n{}");
});

test("a new model replaces the bodies; none restores plain text", () => {
  useOwnErrorBodies({ "404": { contentType: "text/plain; charset=utf-8", body: "a" } });
  useOwnErrorBodies({ "504": { contentType: "text/plain; charset=utf-8", body: "b" } });
  expect(ownErrorBody(404)).toBeUndefined();
  expect(ownErrorBody(504)?.text).toBe("b");
  useOwnErrorBodies(undefined);
  expect(ownErrorBody(504)).toBeUndefined();
});
