import { describe, expect, test } from "bun:test";
import type { BackendTLSPolicy } from "../../../sources/schema/backend-tls-policy.ts";
import { emptySnapshot } from "../../../sources/snapshot.ts";
import { indexSnapshot } from "../../common/snapshot-index.ts";
import { policiesForPort } from "./targets.ts";

const policy = (name: string, section?: string, created?: string, service = "web"): BackendTLSPolicy => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "BackendTLSPolicy",
  metadata: { name, namespace: "app", ...(created ? { creationTimestamp: created } : {}) },
  spec: {
    targetRefs: [{ group: "", kind: "Service", name: service, ...(section ? { sectionName: section } : {}) }],
    validation: { wellKnownCACertificates: "System", hostname: `${name}.example.com` },
  },
});
const index = (...policies: BackendTLSPolicy[]) =>
  indexSnapshot({ ...emptySnapshot, backendTLSPolicies: policies });
const names = (ps: readonly BackendTLSPolicy[]) => ps.map((p) => p.metadata.name);

describe("policiesForPort", () => {
  test("the oldest applies; a tie goes by name; a policy without a timestamp comes after those with one", () => {
    const got = policiesForPort(
      index(
        policy("no-time"),
        policy("b", undefined, "2026-01-01T00:00:00Z"),
        policy("a", undefined, "2026-01-02T00:00:00Z"),
        policy("c", undefined, "2026-01-01T00:00:00Z"),
      ),
      "app",
      "web",
      "https",
    );
    expect(got.winner?.metadata.name).toBe("b");
    expect(names(got.conflicted)).toEqual(["c", "a", "no-time"]);
    expect(got.bySection).toBe(false);
  });

  test("a sectionName policy takes its port from a whole-Service one, which is overridden, not conflicted", () => {
    const i = index(
      policy("whole", undefined, "2026-01-01T00:00:00Z"),
      policy("one", "https-1", "2026-02-01T00:00:00Z"),
    );
    const onOne = policiesForPort(i, "app", "web", "https-1");
    expect(onOne.winner?.metadata.name).toBe("one");
    expect(onOne.bySection).toBe(true);
    expect(names(onOne.overridden)).toEqual(["whole"]);
    expect(onOne.conflicted).toEqual([]);
    const onTwo = policiesForPort(i, "app", "web", "https-2");
    expect(onTwo.winner?.metadata.name).toBe("whole");
    expect(onTwo.overridden).toEqual([]);
  });

  test("an unnamed port only takes whole-Service policies; other Services and namespaces are not targeted", () => {
    const i = index(policy("one", "https-1"), policy("api", undefined, undefined, "api"));
    expect(policiesForPort(i, "app", "web", undefined).winner).toBeUndefined();
    expect(policiesForPort(i, "app", "api", undefined).winner?.metadata.name).toBe("api");
    expect(policiesForPort(i, "other", "api", undefined).winner).toBeUndefined();
  });

  test("a targetRef of another kind or group targets nothing", () => {
    const p = policy("deploy");
    const odd: BackendTLSPolicy = {
      ...p,
      spec: { ...p.spec, targetRefs: [{ group: "apps", kind: "Deployment", name: "web" }] },
    };
    expect(policiesForPort(index(odd), "app", "web", undefined).winner).toBeUndefined();
  });
});
