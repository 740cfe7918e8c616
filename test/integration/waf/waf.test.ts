/**
 * The WAF on the wire, on both fronts, with the real engine (libmodsecurity3) and Debian's Core Rule Set:
 * the attack set is answered 403 on an Ingress with `enable-modsecurity` in Enforce mode and reaches the
 * backend on one without; ordinary traffic passes at paranoia level 1 (no false positive); detection-only
 * passes and counts; bodies past the inspection limit are refused (413) or inspected in part; a request
 * with 10,000 arguments is refused quickly. The rule set is built once per process (engine.ts shares it
 * between gateways), so this file pays for one CRS load.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { wafDecisions } from "../../../src/waf/decisions.ts";
import { serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { ATTACKS, type CaseRequest, ORDINARY } from "./attacks.ts";

const NGINX = "nginx.ingress.kubernetes.io/";
const enforce = {
  [`${NGINX}enable-modsecurity`]: "true",
  [`${NGINX}enable-owasp-core-rules`]: "true",
  "gatehouse.dev/waf-mode": "Enforce",
};

function ingress(name: string, annotations: Record<string, string>): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: shop
  annotations: ${JSON.stringify(annotations)}
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${name}.test
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
`;
}

const route = (name: string) => `ingress/shop/${name}/rule/0/path/0`;

/** A backend that says what reached it: method, target and the body's length. */
function startBackend() {
  let requests = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      requests++;
      const body = await req.arrayBuffer();
      const url = new URL(req.url);
      return Response.json({
        method: req.method,
        target: url.pathname + url.search,
        bodyLength: body.byteLength,
      });
    },
  });
  return {
    port: server.port as number,
    get requests() {
      return requests;
    },
    stop: () => server.stop(true),
  };
}

/**
 * Sends `head`, then `body` once the gateway answered anything (a 100 Continue, or its final answer),
 * and returns every byte it wrote until it closed or went quiet.
 */
async function exchange(port: number, head: string, body: string): Promise<string> {
  const got: Buffer[] = [];
  let bodySent = false;
  const done = Promise.withResolvers<void>();
  let quiet: ReturnType<typeof setTimeout> | undefined;
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(s, chunk) {
        got.push(Buffer.from(chunk));
        if (!bodySent) {
          bodySent = true;
          s.write(body);
        }
        clearTimeout(quiet);
        quiet = setTimeout(() => done.resolve(), 300);
      },
      close() {
        done.resolve();
      },
      error() {
        done.resolve();
      },
    },
  });
  socket.write(head);
  const limit = setTimeout(() => done.resolve(), 5000);
  await done.promise;
  clearTimeout(limit);
  clearTimeout(quiet);
  socket.end();
  return Buffer.concat(got).toString("latin1");
}

let backend: ReturnType<typeof startBackend>;
let dir: string;

beforeAll(async () => {
  backend = startBackend();
  dir = await mkdtemp(join(tmpdir(), "gatehouse-waf-"));
  const yaml = [
    ingress("waf", enforce),
    ingress("open", {}),
    ingress("detect", {
      [`${NGINX}enable-modsecurity`]: "true",
      [`${NGINX}enable-owasp-core-rules`]: "true",
      [`${NGINX}modsecurity-transaction-id`]: "$http_x_txn",
    }),
    ingress("limit", { ...enforce, "gatehouse.dev/waf-body-limit": "1024" }),
    ingress("partial", {
      ...enforce,
      "gatehouse.dev/waf-body-limit": "1024",
      "gatehouse.dev/waf-body-over-limit": "InspectPartial",
    }),
    serviceYaml("web", "shop", backend.port),
  ].join("---\n");
  await writeFile(join(dir, "all.yaml"), yaml);
});

afterAll(async () => {
  await backend.stop();
  await rm(dir, { recursive: true, force: true });
});

forEachFront("the WAF (libmodsecurity3 + OWASP CRS)", (front) => {
  let gw: RunningGateway;
  let port: number;

  beforeAll(async () => {
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front]));
  });
  afterAll(() => gw.stop({ delayMs: 0 }));

  const send = (host: string, c: Pick<CaseRequest, "method" | "target" | "headers" | "body">) =>
    fetch(`http://127.0.0.1:${port}${c.target}`, {
      method: c.method,
      headers: { ...c.headers, host },
      ...(c.body !== undefined ? { body: c.body } : {}),
    });

  test("the attack set: 403 problem+json on the WAF route, never the backend; passed where there is no WAF", async () => {
    const before = backend.requests;
    const blocked = wafDecisions(route("waf"), "block");
    for (const c of ATTACKS) {
      const res = await send("waf.test", c);
      const text = await res.text();
      expect({ name: c.name, status: res.status }).toEqual({ name: c.name, status: 403 });
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(JSON.parse(text).status).toBe(403);
    }
    expect(backend.requests).toBe(before);
    expect(wafDecisions(route("waf"), "block")).toBe(blocked + ATTACKS.length);
    for (const c of ATTACKS) {
      const res = await send("open.test", c);
      await res.arrayBuffer();
      expect({ name: c.name, status: res.status }).toEqual({ name: c.name, status: 200 });
    }
    expect(backend.requests).toBe(before + ATTACKS.length);
  });

  test("ordinary traffic: no false positive at paranoia level 1, bodies reach the backend whole", async () => {
    const passed = wafDecisions(route("waf"), "pass");
    for (const c of ORDINARY) {
      const res = await send("waf.test", c);
      const seen = (await res.json()) as { method: string; bodyLength: number };
      expect({ name: c.name, status: res.status }).toEqual({ name: c.name, status: 200 });
      expect(seen.method).toBe(c.method);
      expect(seen.bodyLength).toBe(Buffer.byteLength(c.body ?? ""));
    }
    expect(wafDecisions(route("waf"), "pass")).toBe(passed + ORDINARY.length);
  });

  test("detection-only passes what Enforce blocks, logs it (named by modsecurity-transaction-id) and counts it", async () => {
    const detected = wafDecisions(route("detect"), "detected");
    // A line per route and rule per 10 s: each front sends an attack of its own to be logged.
    const attack = ATTACKS[front === "raw" ? 0 : 3] as CaseRequest;
    const logs: string[] = [];
    const prev = setLogSink((line) => logs.push(line));
    try {
      const res = await send("detect.test", {
        ...attack,
        headers: { ...attack.headers, "x-txn": `txn-${front}` },
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    } finally {
      setLogSink(prev);
    }
    expect(wafDecisions(route("detect"), "detected")).toBe(detected + 1);
    const line = logs.find((l) => l.includes("detection-only"));
    expect(line).toContain(route("detect"));
    expect(line).toContain(attack.rule);
    expect(JSON.parse(line as string).transaction).toBe(`txn-${front}`);
  });

  test("a chunked body is inspected too", async () => {
    const attack = "user=admin%27%20OR%201%3D1--&pass=x";
    const stream = () =>
      new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode(attack.slice(0, 10)));
          c.enqueue(new TextEncoder().encode(attack.slice(10)));
          c.close();
        },
      });
    const headers = { host: "waf.test", "content-type": "application/x-www-form-urlencoded" };
    const res = await fetch(`http://127.0.0.1:${port}/login`, { method: "POST", headers, body: stream() });
    await res.arrayBuffer();
    expect(res.status).toBe(403);
  });

  test("a body past the inspection limit: 413 (Reject), or its first bytes inspected (InspectPartial)", async () => {
    const big = `a=${"x".repeat(2000)}`;
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const before = backend.requests;
    const refused = await send("limit.test", { method: "POST", target: "/", headers: form, body: big });
    await refused.arrayBuffer();
    expect(refused.status).toBe(413);
    expect(backend.requests).toBe(before);
    const partial = await send("partial.test", { method: "POST", target: "/", headers: form, body: big });
    expect(partial.status).toBe(200);
    expect(((await partial.json()) as { bodyLength: number }).bodyLength).toBe(big.length);
    // What lies past the limit is not inspected (docs/waf.md); what lies within it is.
    const late = `${big}&q=1%27%20OR%20%271%27%3D%271`;
    const lateRes = await send("partial.test", { method: "POST", target: "/", headers: form, body: late });
    expect(lateRes.status).toBe(200);
    await lateRes.arrayBuffer();
    const early = `q=1%27%20OR%20%271%27%3D%271&${big}`;
    const earlyRes = await send("partial.test", { method: "POST", target: "/", headers: form, body: early });
    expect(earlyRes.status).toBe(403);
    await earlyRes.arrayBuffer();
  });

  test("Expect: 100-continue: the body is asked for, then inspected; a declared length past the limit is refused", async () => {
    const attack = "user=admin%27%20OR%201%3D1--&pass=x";
    const head = (host: string, length: number) =>
      `POST /login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;
    const sent = await exchange(port, head("waf.test", attack.length), attack);
    expect(sent).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 403 /);
    const big = await exchange(port, head("limit.test", 5000), "x".repeat(5000));
    // The raw front refuses on the declared length and never asks for the body; Bun.serve asks first.
    if (front === "raw") expect(big).toMatch(/^HTTP\/1\.1 413 /);
    else expect(big).toContain(" 413 ");
  });

  test("10,000 arguments are refused (400) before the rules run, quickly", async () => {
    const body = Array.from({ length: 10_000 }, (_, i) => `p${i}=${i}`).join("&");
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const started = performance.now();
    const res = await send("waf.test", { method: "POST", target: "/", headers: form, body });
    await res.arrayBuffer();
    expect(res.status).toBe(400);
    // All 10,000 through CRS took 4.6 s here; refused first, the engine parses the limit and stops.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test("the decisions are on /metrics", async () => {
    const text = await (await fetch(`http://127.0.0.1:${gw.admin.port}/metrics`)).text();
    expect(text).toContain(`gatehouse_waf_decisions_total{route="${route("waf")}",action="block"}`);
    expect(text).toContain(`gatehouse_waf_decisions_total{route="${route("detect")}",action="detected"}`);
  });
});
