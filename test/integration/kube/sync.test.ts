// Single front: readiness (admin port), Secrets and status, checked by TLS handshakes on HTTPS listeners only.
/**
 * `gatehouse serve --kube` start-up and TLS Secrets against the test API server: `/readyz` answers 503
 * until every kind was listed (one list held back); the first snapshot waits for the referenced Secrets
 * to be read (the informer keeps Secrets without data until something references them), so readiness
 * never comes with listeners on the default certificate and no listener status flaps False → True, also
 * when a Secret becomes referenced later; `--default-certificate` names a Secret no object references
 * and it is still served.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { peerCommonName, selfSigned } from "../../../src/proxy/testing/certs.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import {
  gatewayClass,
  httpsGateway,
  ingress,
  listenerRefs,
  ns,
  service,
  slice,
  tlsSecret,
  within,
} from "../../helpers/kube-fixtures.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

let api: KubeApiServer;
let web: EchoServer;
let gw: RunningGateway;
let dir: string;
let listenerPort: number;
let httpsPort: number;
let restore: ((line: string) => void) | undefined;
/** Every ResolvedRefs value per listener the leader wrote into the Gateway's status, in order. */
const written: Record<string, string>[] = [];
/** What /readyz answered while the gateway was starting. */
const readiness: number[] = [];

const listeners: [string, string, string][] = [
  ["a", "a.example", "cert-a"],
  ["nope", "nope.example", "missing"], // no such Secret: a real problem, reported, not waited for
];

beforeAll(async () => {
  restore = setLogSink(() => {});
  api = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
  web = startEchoServer({ service: "web", namespace: ns });
  dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-sync-"));
  [listenerPort, httpsPort] = [await freePort(), await freePort()];
  api.create(service("web"));
  api.create(slice("web", [web.port]));
  for (const name of ["a", "ing", "default"]) {
    const secret = name === "a" ? "cert-a" : `${name}-cert`;
    api.create(tlsSecret(secret, selfSigned(`${name}.example`)));
  }
  api.create(tlsSecret("unused", selfSigned("unused.example")));
  const secure: Obj = ingress("secure", "ing.example", "/", "web");
  secure.spec.tls = [{ hosts: ["ing.example"], secretName: "ing-cert" }];
  api.create(secure);
  api.create(gatewayClass());
  api.create(httpsGateway("tls", listenerPort, listeners));
  api.store.onEvent((r, e) => {
    const statusWrite = JSON.stringify(e.object.status) !== JSON.stringify(e.old?.status);
    if (r.kind === "Gateway" && e.type === "MODIFIED" && statusWrite)
      written.push(listenerRefs(e.object.status));
  });
  // Reads of Secrets take a while, as from a busy API server: longer than a debounce.
  api.delay((c) => c.resource === "secrets" && c.verb === "get", 300);
  // One kind's first list is slow: nothing may be ready before it answered.
  const listed = api.delay((c) => c.resource === "httproutes" && c.verb === "list", 800);
  const adminPort = await freePort();
  const kubeconfig = await api.writeKubeconfig(join(dir, "kubeconfig"));
  const starting = startTestGateway(
    ["--kube", "--kubeconfig", kubeconfig],
    [
      ...["--admin-port", String(adminPort), "--https-port", String(httpsPort)],
      ...["--default-certificate", `${ns}/default-cert`, "--status-address", "203.0.113.9"],
      ...["--leader-election-namespace", "gatehouse-system", "--lease-duration-ms", "2000"],
    ],
  );
  let started = false;
  void starting.then(() => {
    started = true;
  });
  while (!started) {
    readiness.push(
      await fetch(`http://127.0.0.1:${adminPort}/readyz`).then(
        (r) => r.status,
        () => 0,
      ),
    );
    await Bun.sleep(50);
  }
  listed();
  ({ gw } = await starting);
});

afterAll(async () => {
  await gw?.stop();
  await api?.stop();
  await web?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (restore) setLogSink(restore);
});

const problemsAbout = (what: string) => gw.state.problems.filter((p) => p.message.includes(what));

describe("gatehouse serve --kube: first sync and Secrets", () => {
  test("/readyz is 503 until every kind was listed", () => {
    expect(readiness.filter((s) => s === 503).length).toBeGreaterThan(5); // ~800 ms of the held list
    // 503 throughout, 200 only at the very end (the poll may catch the last moment of the start).
    expect(readiness.slice(0, readiness.lastIndexOf(503))).not.toContain(200);
    expect(gw.state.ready).toBe(true);
  });

  test("ready only with the referenced Secrets loaded: no certificate problem for Secrets that exist", async () => {
    expect(problemsAbout("cert-a")).toEqual([]);
    expect(problemsAbout("ing-cert")).toEqual([]);
    expect(gw.state.problems.filter((p) => p.reason === "InvalidDefaultCertificate")).toEqual([]);
    expect(problemsAbout("missing").length).toBe(1); // the one that does not exist is reported
    expect(await peerCommonName(listenerPort, "a.example")).toBe("a.example");
    expect(await peerCommonName(httpsPort, "ing.example")).toBe("ing.example");
  });

  test("--default-certificate NS/NAME in a cluster: served for names no certificate covers", async () => {
    expect(await peerCommonName(httpsPort, "other.example")).toBe("default.example");
  });

  test("listener status is written once as it is: ResolvedRefs never False for a Secret being read", async () => {
    await within(5000, () => written.some((w) => w.a === "True"));
    expect(written.length).toBeGreaterThan(0);
    for (const w of written) expect(w).toEqual({ a: "True", nope: "False" });
  });

  test("a Secret that becomes referenced later: no False in between, then served", async () => {
    const from = written.length;
    api.apply(httpsGateway("tls", listenerPort, [...listeners, ["late", "late.example", "unused"]]));
    await within(5000, () => written.slice(from).some((w) => w.late === "True"));
    for (const w of written.slice(from)) expect(w.late).toBe("True");
    expect(await peerCommonName(listenerPort, "late.example")).toBe("unused.example");
    expect(problemsAbout("unused")).toEqual([]);
  });
});
