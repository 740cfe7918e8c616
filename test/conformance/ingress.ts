/**
 * The upstream Ingress conformance suite (as data in `<dir>/ingress/cases.json`) run against the live
 * proxy in embedded (folder) mode: for each feature a fresh folder holding only that feature's Ingress,
 * Services and EndpointSlices, echo servers standing in for the echo pods, and a fresh gateway.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { type RunningGateway, startGateway } from "../../src/cli/serve.ts";
import { parseServeConfig } from "../../src/config/config.ts";
import { type EchoServer, startEchoServer } from "../helpers/echo-server.ts";
import type { Front } from "../helpers/fronts.ts";
import { freePort } from "../helpers/ports.ts";
import { type RawResponse, rawRequest } from "../helpers/raw-http.ts";
import type { ExpectedFailure } from "./expected-failures.ts";
import { checkTlsExpectations, conformanceTlsSecret, servedCertificate } from "./ingress-tls.ts";
import type { CaseResult } from "./report.ts";

const namespace = "ingress-conformance";
const ourClass = "conformance";

interface ServiceCase {
  name: string;
  port: number;
  portName: string | null;
  targetPort: number;
  deployment: string;
  echoEnv: Record<string, string>;
}
interface Scenario {
  name: string;
  description?: string;
  request?: { method: string; scheme: string; host: string; path: string; repeat?: number };
  expect?: Record<string, unknown>;
  setup?: unknown[];
}
interface Feature {
  file: string;
  setup: {
    scale?: { service: string; replicas: number };
    tlsSecret?: { name: string; dnsNames: string[] };
  }[];
  ingress: { manifest: string; docStringKind: "Ingress" | "IngressSpec"; name: string };
  services: ServiceCase[];
  scenarios: Scenario[];
}

export async function runIngressSuite(
  dir: string,
  xfails: readonly ExpectedFailure[],
  front: Front,
): Promise<CaseResult[]> {
  const cases = JSON.parse(await readFile(join(dir, "cases.json"), "utf8")) as { features: Feature[] };
  if (!Array.isArray(cases.features) || cases.features.length === 0) throw new Error(`${dir}: no features`);
  const results: CaseResult[] = [];
  for (const feature of cases.features) results.push(...(await runFeature(dir, feature, xfails, front)));
  return results;
}

async function runFeature(
  dir: string,
  feature: Feature,
  xfails: readonly ExpectedFailure[],
  front: Front,
): Promise<CaseResult[]> {
  const test = feature.file.replace(/^features\//, "").replace(/\.feature$/, "");
  const folder = await mkdtemp(join(tmpdir(), `gatehouse-conf-${test}-`));
  const echoes: EchoServer[] = [];
  let gateway: RunningGateway | undefined;
  const results: CaseResult[] = [];
  try {
    const replicas = (svc: string) =>
      feature.setup.find((s) => s.scale?.service === svc)?.scale?.replicas ?? 1;
    const ingress = await ingressObject(dir, feature);
    const hosts = ((ingress.spec.rules ?? []) as { host?: string }[]).map((r) => r.host ?? "");
    const objects: unknown[] = [ingressClassObject(), ingress];
    for (const { tlsSecret } of feature.setup)
      if (tlsSecret) objects.push(await conformanceTlsSecret(tlsSecret.name, namespace, tlsSecret.dnsNames));
    for (const svc of feature.services) {
      const started = Array.from({ length: replicas(svc.name) }, (_, i) =>
        startEchoServer({
          namespace,
          ingress: svc.echoEnv.INGRESS_NAME ?? "",
          service: svc.echoEnv.SERVICE_NAME ?? svc.name,
          pod: `${svc.deployment}-local-${i}`,
        }),
      );
      echoes.push(...started);
      objects.push(serviceObject(svc), ...endpointSliceObject(svc, started));
    }
    await writeFile(join(folder, "feature.yaml"), objects.map((o) => stringify(o)).join("---\n"));
    const ports = { http: await freePort(), https: await freePort() };
    const config = parseServeConfig(
      ["--dir", folder, "--bind", "127.0.0.1", "--http-port", String(ports.http), "--admin-port", "0"].concat(
        ["--https-port", String(ports.https), "--front", front],
      ),
      {
        GATEHOUSE_INGRESS_CLASS: ourClass,
        GATEHOUSE_LOG_LEVEL: "error",
        GATEHOUSE_ACCESS_LOG_SAMPLE: "0",
        // GATEHOUSE_HTTP2=true runs the suite against the node:http2 HTTPS listeners (docs/tls.md).
        GATEHOUSE_HTTP2: process.env.GATEHOUSE_HTTP2 ?? "false",
      },
    );
    gateway = await startGateway(config);
    for (const scenario of feature.scenarios) {
      const name = scenario.description ? `${scenario.name} ${scenario.description}` : scenario.name;
      let detail: string;
      try {
        detail = await runScenario(scenario, ports, gateway, feature.ingress.name, hosts);
      } catch (err) {
        detail = `error: ${(err as Error).message}`;
      }
      const xfail = xfails.find(
        (x) =>
          x.suite === "ingress" &&
          x.test === test &&
          name.includes(x.caseContains) &&
          (x.front === undefined || x.front === front),
      );
      const outcome = detail === "" ? (xfail ? "xpass" : "pass") : xfail ? "xfail" : "fail";
      const shown =
        outcome === "xfail"
          ? `${xfail?.reason} — ${detail}`
          : outcome === "xpass"
            ? "passes now: remove it from expected-failures.ts"
            : detail;
      results.push({ suite: "ingress", front, test, name, outcome, detail: shown });
    }
  } finally {
    await gateway?.stop();
    await Promise.all(echoes.map((e) => e.stop()));
    await rm(folder, { recursive: true, force: true });
  }
  return results;
}

/** Runs one scenario; returns "" when every expectation held, else what did not. */
async function runScenario(
  s: Scenario,
  ports: Ports,
  gw: RunningGateway,
  ingressName: string,
  hosts: readonly string[],
): Promise<string> {
  if (!s.request) {
    // ingress_class: no request upstream; the check is that the controller ignored the Ingress. In folder
    // mode there is no status to write, so check that nothing of it reached the model, and that traffic
    // for its host does not reach its backend.
    const model = gw.state.model;
    if (!model) return "no model applied";
    const own = model.listeners.flatMap((l) =>
      l.virtualHosts.flatMap((v) => v.routes.filter((r) => r.source.name === ingressName)),
    );
    if (own.length) return `ignored Ingress produced routes: ${own.map((r) => r.name).join(", ")}`;
    for (const host of hosts) {
      const res = await send("GET", "http", host, "/", ports);
      if (res.status !== 404) return `host ${host} got ${res.status}, want 404`;
    }
    return hosts.length ? "" : "the Ingress has no host to probe";
  }
  const req = s.request;
  const expect = s.expect ?? {};
  const tlsProblems =
    req.scheme === "https"
      ? checkTlsExpectations(expect, await servedCertificate(ports.https, req.host))
      : [];
  if (req.repeat) {
    const pods = new Set<string>();
    const statuses: number[] = [];
    for (let i = 0; i < req.repeat; i++) {
      const res = await send(req.method, req.scheme, req.host, req.path, ports);
      statuses.push(res.status);
      if (res.status === expect.allStatus) pods.add(String(echoOf(res)?.pod));
    }
    const bad = statuses.filter((st) => st !== expect.allStatus);
    if (bad.length)
      return `${bad.length} of ${req.repeat} responses were not ${expect.allStatus}: ${bad.slice(0, 5)}`;
    if (pods.size !== expect.distinctEchoPods)
      return `${pods.size} distinct pods, want ${expect.distinctEchoPods}`;
    return "";
  }
  const res = await send(req.method, req.scheme, req.host, req.path, ports);
  return [...tlsProblems, checkExpectations(expect, res)].filter(Boolean).join("; ");
}

interface Ports {
  readonly http: number;
  readonly https: number;
}

/**
 * Send like the upstream client: Host (and SNI for https) from the step, Go's User-Agent, redirects
 * followed by hand to the same proxy address with the Location's scheme, hostname and path (the port of
 * that scheme's listener, as upstream connects to the address's default port).
 */
async function send(
  method: string,
  scheme: string,
  host: string,
  path: string,
  ports: Ports,
): Promise<RawResponse> {
  let target = path;
  let proto = scheme;
  let hostHeader = host || `127.0.0.1:${ports.http}`;
  for (let hop = 0; hop < 5; hop++) {
    const https = proto === "https";
    const res = await rawRequest({
      host: "127.0.0.1",
      port: https ? ports.https : ports.http,
      method,
      target,
      headers: [
        ["Host", hostHeader],
        ["User-Agent", "Go-http-client/1.1"],
      ],
      ...(https ? { tls: { servername: hostHeader } } : {}),
    });
    if (![301, 302, 303, 307, 308].includes(res.status) || !res.headers.location) return res;
    const loc = new URL(res.headers.location, `${proto}://${hostHeader}${target}`);
    if (loc.protocol !== "http:" && loc.protocol !== "https:") return res;
    proto = loc.protocol.slice(0, -1);
    hostHeader = loc.hostname;
    target = loc.pathname + loc.search;
  }
  throw new Error("too many redirects");
}

function echoOf(res: RawResponse): Record<string, unknown> | undefined {
  if (!res.headers["content-type"]?.includes("application/json")) return undefined;
  try {
    return JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function checkExpectations(expect: Record<string, unknown>, res: RawResponse): string {
  const problems: string[] = [];
  const echo = echoOf(res);
  for (const [key, want] of Object.entries(expect)) {
    if (key === "status") {
      if (res.status !== want) problems.push(`status ${res.status}, want ${want}`);
    } else if (key === "response.proto") {
      if (res.proto !== want) problems.push(`proto ${res.proto}, want ${want}`);
    } else if (key === "response.headers") {
      for (const [name, value] of Object.entries(want as Record<string, string>)) {
        const got = res.headers[name.toLowerCase()];
        if (got === undefined || (value !== "*" && got !== value))
          problems.push(`response header ${name}: ${got}`);
      }
    } else if (key === "echo.headers") {
      const headers = (echo?.headers ?? {}) as Record<string, string[]>;
      for (const [name, value] of Object.entries(want as Record<string, string>)) {
        const got = headers[name]?.join(",");
        if (got !== value) problems.push(`backend saw ${name}: ${got}, want ${value}`);
      }
    } else if (key.startsWith("tls.")) {
      // checked on the served certificate (ingress-tls.ts)
    } else if (key.startsWith("echo.")) {
      const got = echo?.[key.slice(5)];
      if (got !== want) problems.push(`${key} ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    } else {
      problems.push(`unknown expectation ${key}`);
    }
  }
  return problems.join("; ");
}

function ingressClassObject() {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "IngressClass",
    metadata: { name: ourClass },
    spec: { controller: "gatehouse.dev/ingress-controller" },
  };
}

/** The feature's Ingress; a bare IngressSpec gets the name from the step; no class → the suite's class. */
async function ingressObject(dir: string, feature: Feature) {
  const doc = parse(await readFile(join(dir, feature.ingress.manifest), "utf8")) as Record<string, unknown>;
  const ingress: {
    apiVersion?: string;
    kind?: string;
    metadata: Record<string, unknown>;
    spec: Record<string, unknown>;
  } =
    feature.ingress.docStringKind === "IngressSpec"
      ? {
          apiVersion: "networking.k8s.io/v1",
          kind: "Ingress",
          metadata: { name: feature.ingress.name },
          spec: doc,
        }
      : (doc as { metadata: Record<string, unknown>; spec: Record<string, unknown> });
  ingress.metadata = { ...ingress.metadata, namespace };
  if (!ingress.spec.ingressClassName) ingress.spec = { ...ingress.spec, ingressClassName: ourClass };
  return ingress;
}

function serviceObject(svc: ServiceCase) {
  const port: Record<string, unknown> = { port: svc.port, targetPort: svc.targetPort };
  if (svc.portName) port.name = svc.portName;
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: svc.name, namespace },
    spec: { ports: [port] },
  };
}

/** One endpoint per echo server; every echo listens on its own loopback port, so `port` is per endpoint
 * in reality but an EndpointSlice has one port list: so one slice per echo server. */
function endpointSliceObject(svc: ServiceCase, echoes: EchoServer[]) {
  return echoes.map((e, i) => ({
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: `${svc.name}-${i}`, namespace, labels: { "kubernetes.io/service-name": svc.name } },
    addressType: "IPv4",
    endpoints: [
      {
        addresses: ["127.0.0.1"],
        conditions: { ready: true },
        targetRef: { kind: "Pod", name: `${svc.deployment}-local-${i}` },
      },
    ],
    ports: [{ name: svc.portName ?? "", port: e.port, protocol: "TCP" }],
  }));
}
