/**
 * The session key Secret against the test API server (a real HTTP API, client-node's transport): the
 * leader creates `gatehouse-session-keys` when it is absent, a follower (another replica) reads the same
 * key, so a token one signs the other verifies; a rotation (`previous` = the old key) keeps old tokens
 * verifying; a Secret with an unusable key leaves the keys in use. The calls stay within the declared RBAC.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setLogSink } from "../../../src/observability/logger.ts";
import { type SessionKeys, sessionKeys, setSessionKeys } from "../../../src/proxy/balancing/session-keys.ts";
import { signToken, verifyToken } from "../../../src/proxy/balancing/timed-token.ts";
import { KubeClient, loadKubeConfig } from "../../../src/sources/kubernetes/client.ts";
import { clusterPermissions, leasePermissions } from "../../../src/sources/kubernetes/permissions.ts";
import { SESSION_KEY_SECRET, SessionKeySecret } from "../../../src/sources/kubernetes/session-key-secret.ts";
import { KubeApiServer } from "../../helpers/kube-api-server.ts";

let api: KubeApiServer;
let dir: string;
let client: KubeClient;
let restoreLog: ((line: string) => void) | undefined;
const before: SessionKeys = sessionKeys();

beforeAll(async () => {
  restoreLog = setLogSink(() => {});
  api = await KubeApiServer.start();
  dir = await mkdtemp(join(tmpdir(), "gatehouse-session-keys-"));
  client = new KubeClient(loadKubeConfig(await api.writeKubeconfig(join(dir, "kubeconfig"))));
});

afterAll(async () => {
  setSessionKeys(before);
  if (restoreLog) setLogSink(restoreLog);
  await api.stop();
  await rm(dir, { recursive: true, force: true });
});

const token = { endpoint: "0123456789abcdef", startMs: Date.now(), lastMs: Date.now() };
const timeouts = { absoluteMs: 3_600_000 };
function secretKey(): string {
  const secret = api.store.get(api.resource("Secret"), "gatehouse-system", SESSION_KEY_SECRET);
  return (secret.data as Record<string, string>).current as string;
}

test("a follower does not create it; the leader does; the follower then reads the same key", async () => {
  const follower = new SessionKeySecret(client, "gatehouse-system", () => false, 100);
  await follower.start();
  expect(() => secretKey()).toThrow();
  const followerKeys = sessionKeys();

  const leader = new SessionKeySecret(client, "gatehouse-system", () => true, 100);
  await leader.start();
  const key = secretKey();
  expect(Buffer.from(key as string, "base64")).toHaveLength(32);
  expect(Buffer.from(sessionKeys().current).toString("base64")).toBe(key);
  const signed = signToken("route", token);
  leader.stop();

  // The follower's next round (it retries quickly until loaded) installs the Secret's key.
  setSessionKeys(followerKeys);
  expect(verifyToken("route", signed, timeouts, Date.now())).toBeUndefined();
  for (let i = 0; i < 50 && Buffer.from(sessionKeys().current).toString("base64") !== key; i++)
    await Bun.sleep(50);
  expect(verifyToken("route", signed, timeouts, Date.now())).toEqual(token);

  // Rotation: the new key signs, the previous one still verifies.
  api.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: SESSION_KEY_SECRET, namespace: "gatehouse-system" },
    data: { current: randomBytes(32).toString("base64"), previous: key },
  });
  for (let i = 0; i < 50 && sessionKeys().previous === undefined; i++) await Bun.sleep(50);
  expect(Buffer.from(sessionKeys().previous as Uint8Array).toString("base64")).toBe(key);
  expect(verifyToken("route", signed, timeouts, Date.now())).toEqual(token);
  expect(signToken("route", token)).not.toBe(signed);

  // An unusable key: the keys in use stay.
  const inUse = sessionKeys();
  api.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: SESSION_KEY_SECRET, namespace: "gatehouse-system" },
    data: { current: Buffer.from("short").toString("base64") },
  });
  await Bun.sleep(300);
  expect(sessionKeys()).toBe(inUse);
  follower.stop();
});

test("every call it made is one the RBAC grants", () => {
  const granted = new Set(
    [...clusterPermissions(), ...leasePermissions()].map((p) => `${p.resource}|${p.verb}`),
  );
  const made = api.calls.filter((c) => c.resource === "secrets").map((c) => `${c.resource}|${c.verb}`);
  expect(made).toContain("secrets|create");
  for (const call of made) expect(granted).toContain(call);
});
