/**
 * Header modifiers Bun cannot send, through the whole pipeline (folder → translate → GatewayServer), on
 * both fronts: a name that is not an RFC 9110 token (`example:1`), an empty name, or a value with CR/LF
 * (a set Host too), in a RequestHeaderModifier or a ResponseHeaderModifier (on the rule or on a
 * backendRef), is refused at translate time. Before, such a rule was served: the raw front reset the
 * connection (Bun's Headers threw), the Bun front answered 500, and a Host with CR/LF reached the
 * upstream as two fields. Its rule is dropped (PartiallyInvalid, UnsupportedValue) and its path answers what no
 * route answers (404), never a reset connection; the good rule beside it keeps serving, and Latin-1
 * values go out as one byte each.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningGateway, startGateway } from "../../../src/cli/serve.ts";
import { parseServeConfig } from "../../../src/config/config.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { gatewayClassYaml, serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { rawRequest } from "../../helpers/raw-http.ts";

/** Refused rules: path → the filter, as YAML flow. */
const refused: Record<string, string> = {
  "/request-bad-name":
    '{ type: RequestHeaderModifier, requestHeaderModifier: { set: [{ name: "example:1", value: v }] } }',
  "/request-empty-name":
    '{ type: RequestHeaderModifier, requestHeaderModifier: { add: [{ name: "", value: v }] } }',
  "/request-crlf":
    '{ type: RequestHeaderModifier, requestHeaderModifier: { set: [{ name: X-Injected, value: "a\\r\\nX-Evil: 1" }] } }',
  // The raw front writes a set Host as it is: unchecked, this line reached the upstream as two fields.
  "/request-host-crlf":
    '{ type: RequestHeaderModifier, requestHeaderModifier: { set: [{ name: Host, value: "a\\r\\nX-Evil: 1" }] } }',
  "/response-bad-name":
    '{ type: ResponseHeaderModifier, responseHeaderModifier: { add: [{ name: "example:1", value: v }] } }',
  "/response-empty-name": '{ type: ResponseHeaderModifier, responseHeaderModifier: { remove: [""] } }',
  "/response-crlf":
    '{ type: ResponseHeaderModifier, responseHeaderModifier: { set: [{ name: X-Injected, value: "a\\r\\nSet-Cookie: x=1" }] } }',
};

function manifests(port: number, echoPort: number): string {
  const rule = (path: string, filter: string) =>
    `    - matches: [{ path: { type: PathPrefix, value: ${path} } }]\n` +
    `      filters: [${filter}]\n` +
    "      backendRefs: [{ name: echo, port: 80 }]\n";
  return `${gatewayClassYaml}---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: demo }
spec:
  gatewayClassName: gatehouse
  listeners:
    - { name: http, port: ${port}, protocol: HTTP }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: web, namespace: demo }
spec:
  parentRefs: [{ name: gw }]
  rules:
${Object.entries(refused)
  .map(([path, filter]) => rule(path, filter))
  .join("")}    - matches: [{ path: { type: PathPrefix, value: /backend-crlf } }]
      backendRefs:
        - name: echo
          port: 80
          filters: [{ type: ResponseHeaderModifier, responseHeaderModifier: { add: [{ name: X-Injected, value: "a\\r\\nb" }] } }]
${rule(
  "/ok",
  '{ type: RequestHeaderModifier, requestHeaderModifier: { set: [{ name: X-Ok, value: "yes" }, { name: X-Latin, value: "café" }] } }, ' +
    '{ type: ResponseHeaderModifier, responseHeaderModifier: { add: [{ name: X-Ok, value: "yes" }, { name: X-Latin, value: "ÿ" }] } }',
)}---
${serviceYaml("echo", "demo", echoPort)}`;
}

forEachFront("header modifiers Bun cannot send", (front) => {
  let dir: string | undefined;
  let echo: EchoServer | undefined;
  let gw: RunningGateway | undefined;
  let port = 0;
  let restoreSink: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    dir = await mkdtemp(join(tmpdir(), "gatehouse-header-modifier-"));
    echo = startEchoServer({ service: "echo" });
    port = await freePort();
    await writeFile(join(dir, "routes.yaml"), manifests(port, echo.port));
    const args = ["--dir", dir, "--bind", "127.0.0.1", "--admin-port", "0", "--debounce-ms", "0"];
    args.push("--http-port", String(await freePort()), "--https-port", String(await freePort()));
    args.push("--front", front);
    gw = await startGateway(
      parseServeConfig(args, { GATEHOUSE_LOG_LEVEL: "error", GATEHOUSE_ACCESS_LOG_SAMPLE: "0" }),
    );
  });

  afterAll(async () => {
    await gw?.stop({ timeoutMs: 1000 });
    await echo?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restoreSink) setLogSink(restoreSink);
  });

  const get = (path: string) =>
    rawRequest({ host: "127.0.0.1", port, target: path, headers: [["Host", "web.example"]] });

  test("the route is Accepted with each bad rule dropped: PartiallyInvalid, UnsupportedValue", () => {
    const route = gw?.state.statuses.find((s) => s.target.kind === "HTTPRoute" && s.target.name === "web");
    const parents = (route?.status.parents ?? []) as {
      conditions: { type: string; status: string; reason: string; message: string }[];
    }[];
    const conditions = parents[0]?.conditions ?? [];
    const accepted = conditions.find((c) => c.type === "Accepted");
    expect(`${accepted?.status}/${accepted?.reason}`).toBe("True/Accepted");
    const partly = conditions.find((c) => c.type === "PartiallyInvalid");
    expect(`${partly?.status}/${partly?.reason}`).toBe("True/UnsupportedValue");
    const message = partly?.message ?? "";
    // One entry per refused rule, in rule order, each naming the field and what is wrong with it.
    const expected = [
      'spec.rules[0].filters[0]: requestHeaderModifier.set[0].name "example:1" is not a valid header name',
      "spec.rules[1].filters[0]: requestHeaderModifier.add[0].name must not be empty",
      'spec.rules[2].filters[0]: requestHeaderModifier.set[0].value "a\\r\\nX-Evil: 1" contains the control character CR (U+000D)',
      'spec.rules[3].filters[0]: requestHeaderModifier.set[0].value "a\\r\\nX-Evil: 1" contains the control character CR (U+000D)',
      'spec.rules[4].filters[0]: responseHeaderModifier.add[0].name "example:1" is not a valid header name',
      "spec.rules[5].filters[0]: responseHeaderModifier.remove[0] must not be empty",
      'spec.rules[6].filters[0]: responseHeaderModifier.set[0].value "a\\r\\nSet-Cookie: x=1" contains the control character CR (U+000D)',
      'spec.rules[7].backendRefs[0].filters[0]: responseHeaderModifier.add[0].value "a\\r\\nb" contains the control character CR (U+000D)',
    ];
    let at = 0;
    for (const part of expected) {
      const found = message.indexOf(part, at);
      expect([part, found >= at]).toEqual([part, true]);
      at = found + part.length;
    }
    expect(message).not.toContain("spec.rules[8]"); // the good rule
    const problem = gw?.state.problems.find(
      (p) => p.object.kind === "HTTPRoute" && p.object.name === "web" && p.reason === "UnsupportedValue",
    );
    expect(problem?.message).toContain("PartiallyInvalid: Dropped Rule(s): spec.rules[0].filters[0]");
  });

  test("the good rule answers 200 with its edits, Latin-1 values as one byte each", async () => {
    const res = await get("/ok");
    expect(res.status).toBe(200);
    expect(res.headers["x-ok"]).toBe("yes");
    // The head is read as Latin-1: one character is one byte, so "ÿ" here is the byte 0xFF.
    expect(res.headers["x-latin"]).toBe("ÿ");
    const sent = JSON.parse(res.body).headers as Record<string, string[]>;
    expect(sent["X-Ok"]).toEqual(["yes"]);
    // Bun.serve (the echo) reads the byte 0xE9 as U+00E9 and echoes it in UTF-8 JSON.
    expect(sent["X-Latin"]).toEqual(["café"]);
  });

  describe("a refused rule's path answers 404 (no route), never a reset connection", () => {
    for (const path of [...Object.keys(refused), "/backend-crlf"]) {
      test(path, async () => {
        const before = echo?.requests ?? 0;
        const res = await get(path);
        expect(res.status).toBe(404);
        expect(res.head).not.toContain("X-Evil");
        expect(res.headers["set-cookie"]).toBeUndefined();
        expect((echo?.requests ?? 0) - before).toBe(0);
        // The good rule still serves after it.
        expect((await get("/ok")).status).toBe(200);
      });
    }
  });
});
