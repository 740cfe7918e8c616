/**
 * GatewayServer over time: table swaps under load, listeners opening and closing with the model,
 * graceful stop, a failed apply (on both fronts), and HTTPS listeners (SNI, certificate rotation on the
 * same port).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import type { GatewayModel, Listener } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import {
  backend,
  forwardTo,
  listener,
  match,
  model,
  route,
  vhost,
} from "../../../src/proxy/testing/model.ts";
import { type Received, startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { type Front, forEachFront } from "../../helpers/fronts.ts";

let a: TestUpstream;
let b: TestUpstream;
let restoreSink: ((line: string) => void) | undefined;
const servers: GatewayServer[] = [];

beforeAll(() => {
  restoreSink = setLogSink(() => {});
  [a, b] = [startUpstream("a"), startUpstream("b")];
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all([a.stop(), b.stop()]);
  if (restoreSink) setLogSink(restoreSink);
});

function gateway(front?: Front): GatewayServer {
  const gw = new GatewayServer({ bind: "127.0.0.1", front });
  servers.push(gw);
  return gw;
}

function oneRoute(to: string, extra: Partial<Listener> = {}, path = "/"): GatewayModel {
  return model(
    [listener([vhost("*", [route(`to-${to}`, match(path), forwardTo(to))])], extra)],
    [backend("a", [a.port]), backend("b", [b.port])],
  );
}

async function upstreamOf(port: number, path = "/", init: RequestInit = {}): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, init);
  return ((await res.json()) as Received).upstream;
}

forEachFront("GatewayServer over time", (front) => {
  test("a swap does not disturb a request in flight; new requests see the new table", async () => {
    const gw = gateway(front);
    await gw.apply(oneRoute("a"));
    const port = gw.ports()[0]?.port ?? 0;
    const slow = upstreamOf(port, "/slow/400");
    await Bun.sleep(100);
    await gw.apply(oneRoute("b"));
    expect(gw.ports()[0]?.port).toBe(port);
    expect(await upstreamOf(port)).toBe("b");
    expect(await slow).toBe("a");
  });

  test("swaps under concurrent load never fail a request", async () => {
    const gw = gateway(front);
    await gw.apply(oneRoute("a"));
    const port = gw.ports()[0]?.port ?? 0;
    let flips = 0;
    const flipper = (async () => {
      for (; flips < 20; flips++) {
        await gw.apply(oneRoute(flips % 2 ? "a" : "b"));
        await Bun.sleep(5);
      }
    })();
    const results = await Promise.all(Array.from({ length: 100 }, () => upstreamOf(port, "/x")));
    await flipper;
    expect(results.every((u) => u === "a" || u === "b")).toBe(true);
  });

  test("listeners open and close with the model", async () => {
    const gw = gateway(front);
    const two = model(
      [
        listener([vhost("*", [route("a", match("/"), forwardTo("a"))])], { name: "one" }),
        listener([vhost("*", [route("b", match("/"), forwardTo("b"))])], {
          name: "two",
          address: "127.0.0.2",
        }),
      ],
      [backend("a", [a.port]), backend("b", [b.port])],
    );
    await gw.apply(two);
    const ports = gw.ports();
    expect(ports.map((p) => p.listener).sort()).toEqual(["one", "two"]);
    const second = ports.find((p) => p.listener === "two");
    expect(second?.address).toBe("127.0.0.2");
    expect(await upstreamOf(second?.port ?? 0).catch(() => "unreachable")).toBe("unreachable"); // 127.0.0.1
    const res = await fetch(`http://127.0.0.2:${second?.port}/`);
    expect(((await res.json()) as Received).upstream).toBe("b");

    await gw.apply(oneRoute("a", { name: "one" }));
    expect(gw.ports().map((p) => p.listener)).toEqual(["one"]);
    await Bun.sleep(50);
    expect(
      await fetch(`http://127.0.0.2:${second?.port}/`).then(
        () => "open",
        () => "closed",
      ),
    ).toBe("closed");
  });

  test("a listener that cannot bind fails the apply and leaves the running config serving", async () => {
    const gw = gateway(front);
    await gw.apply(oneRoute("a"));
    const port = gw.ports()[0]?.port ?? 0;
    const blocker = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("blocker") });
    try {
      const clash = model(
        [
          listener([vhost("*", [route("b", match("/"), forwardTo("b"))])]),
          listener([vhost("*", [route("b2", match("/"), forwardTo("b"))])], {
            name: "clash",
            port: blocker.port,
          }),
        ],
        [backend("a", [a.port]), backend("b", [b.port])],
      );
      await expect(gw.apply(clash)).rejects.toThrow();
      expect(await upstreamOf(port)).toBe("a");
      expect(gw.ports().length).toBe(1);
    } finally {
      blocker.stop(true);
    }
  });

  test("stop lets a request in flight finish", async () => {
    const gw = gateway(front);
    await gw.apply(oneRoute("a"));
    const port = gw.ports()[0]?.port ?? 0;
    const slow = upstreamOf(port, "/slow/300");
    await Bun.sleep(50);
    await gw.stop();
    expect(await slow).toBe("a");
    expect(
      await fetch(`http://127.0.0.1:${port}/`).then(
        () => "open",
        () => "closed",
      ),
    ).toBe("closed");
  });
});

// HTTPS listeners are Bun.serve whatever the front (--front picks only what serves plain HTTP): run once.
describe("HTTPS", () => {
  let dir: string;
  const cert = (cn: string) => {
    const key = join(dir, `${cn}.key`);
    const crt = join(dir, `${cn}.crt`);
    const r = Bun.spawnSync([
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-subj",
      `/CN=${cn}`,
      "-addext",
      `subjectAltName=DNS:${cn}`,
      "-days",
      "1",
      "-keyout",
      key,
      "-out",
      crt,
    ]);
    if (r.exitCode !== 0) throw new Error(r.stderr.toString());
    return { certPem: readFileSync(crt, "utf8"), keyPem: readFileSync(key, "utf8") };
  };
  const tlsModel = (certs: { name: string; pem: { certPem: string; keyPem: string } }[]) =>
    oneRoute("a", {
      protocol: "HTTPS",
      name: "test/https",
      tls: {
        certificates: certs.map((c) => ({
          source: { kind: "Secret", namespace: "t", name: c.name },
          hostnames: [c.name],
          ...c.pem,
        })),
      },
    });
  const peerCN = (port: number, servername: string) =>
    new Promise<string>((resolve, reject) => {
      const s = tlsConnect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, () => {
        resolve(String(s.getPeerCertificate().subject?.CN));
        s.end();
      });
      s.on("error", reject);
    });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-proxy-tls-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("serves by SNI, forwards with X-Forwarded-Proto https, rotates certificates on the same port", async () => {
    const gw = gateway();
    const [one, two, one2] = [cert("one.example"), cert("two.example"), cert("one.example")];
    await gw.apply(
      tlsModel([
        { name: "one.example", pem: one },
        { name: "two.example", pem: two },
      ]),
    );
    const port = gw.ports()[0]?.port ?? 0;
    expect(await peerCN(port, "two.example")).toBe("two.example");
    expect(await peerCN(port, "unknown.example")).toBe("one.example");
    const res = await fetch(`https://127.0.0.1:${port}/`, { tls: { rejectUnauthorized: false } });
    const got = (await res.json()) as Received;
    expect(got.headers["x-forwarded-proto"]).toBe("https");

    const fingerprint = (pem: string) => new Bun.CryptoHasher("sha256").update(pem).digest("hex");
    expect(fingerprint(one.certPem)).not.toBe(fingerprint(one2.certPem));
    await gw.apply(
      tlsModel([
        { name: "one.example", pem: one2 },
        { name: "two.example", pem: two },
      ]),
    );
    expect(gw.ports()[0]?.port).toBe(port);
    const served = await new Promise<string>((resolve, reject) => {
      const s = tlsConnect(
        { host: "127.0.0.1", port, servername: "one.example", rejectUnauthorized: false },
        () => {
          resolve(s.getPeerCertificate().fingerprint256);
          s.end();
        },
      );
      s.on("error", reject);
    });
    const want = new (await import("node:crypto")).X509Certificate(one2.certPem).fingerprint256;
    expect(served).toBe(want);
  });
});
