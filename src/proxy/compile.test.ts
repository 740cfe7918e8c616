import { describe, expect, test } from "bun:test";
import type { Filter } from "../model/index.ts";
import { compile } from "./compile.ts";
import { backend, forwardTo, listener, match, model, route, vhost } from "./testing/model.ts";

describe("compile", () => {
  test("never throws on a model it cannot fully serve, and says what it left out", () => {
    const weird = { kind: "Teleport" } as unknown as Filter;
    const t = compile(
      model(
        [
          listener([
            vhost("a.example", [route("ok", match("/"), forwardTo("b"))]),
            vhost("a.example", [route("dup", match("/"), forwardTo("b"))]),
            vhost("*", [route("weird", match("/"), forwardTo("b"), { filters: [weird] })]),
            vhost("*", [route("second-any", match("/"), forwardTo("b"))]),
            vhost("bad-wildcard.example", [], "WildcardOneLabel"),
          ]),
        ],
        [backend("b", [1234]), backend("h2", [1], { protocol: "h2c" })],
      ),
    );
    const w = t.warnings.join("\n");
    expect(w).toContain("duplicate virtual host a.example");
    expect(w).toContain("more than one catch-all");
    expect(w).toContain("weird");
    expect(w).toContain("bad-wildcard.example");
    expect(w).not.toContain("h2c");
    const weirdRoute = t.listeners[0]?.hosts.any?.routes[0];
    expect(weirdRoute?.action).toMatchObject({ kind: "DirectResponse", status: 500 });
    expect(t.listeners[0]?.hosts.exact.get("a.example")?.routes[0]?.name).toBe("ok");
  });

  test("backends become ready-made endpoint URLs, IPv6 in brackets, problems kept", () => {
    const t = compile(
      model(
        [listener([vhost("*", [route("r", match("/"), forwardTo("b", "down", "ghost"))])])],
        [
          backend("b", [
            { address: "10.0.0.1", port: 8080 },
            { address: "fd00::1", port: 80 },
          ]),
          backend("down", [], { problem: "ServiceNotFound" }),
        ],
      ),
    );
    const a = t.listeners[0]?.hosts.any?.routes[0]?.action;
    if (a?.kind !== "Forward") throw new Error("not a forward");
    const [b, down, ghost] = [a.pick(), a.pick(), a.pick()];
    expect(b?.backend?.bases).toEqual(["http://10.0.0.1:8080", "http://[fd00::1]:80"]);
    expect(down?.backend?.problem).toBe("ServiceNotFound");
    expect(ghost?.backend).toBeUndefined();
    expect(t.warnings.join()).toContain("unknown backend ghost");
  });

  test("ReplacePrefixMatch on a regex route answers 500", () => {
    const t = compile(
      model([
        listener([
          vhost("*", [
            route("re", match("/x.*", "RegularExpression"), forwardTo("b"), {
              filters: [{ kind: "URLRewrite", path: { type: "ReplacePrefixMatch", value: "/y" } }],
            }),
          ]),
        ]),
      ]),
    );
    expect(t.listeners[0]?.hosts.any?.routes[0]?.action).toMatchObject({
      kind: "DirectResponse",
      status: 500,
    });
  });

  test("an invalid reference keeps its weight, carries its status and is never looked up", () => {
    const t = compile(
      model(
        [
          listener([
            vhost("*", [
              route("r", match("/"), {
                kind: "Forward",
                backends: [
                  { backendId: "ok", weight: 1, filters: [] },
                  { backendId: "other-ns/svc:80", weight: 1, filters: [], failStatus: 500 },
                ],
              }),
            ]),
          ]),
        ],
        [backend("ok", [1234]), backend("h2", [1], { protocol: "h2c" })],
      ),
    );
    const a = t.listeners[0]?.hosts.any?.routes[0]?.action;
    if (a?.kind !== "Forward") throw new Error("not a forward");
    const picks = [a.pick(), a.pick()];
    expect(picks.map((p) => p?.failStatus).sort()).toEqual([500, undefined]);
    expect(picks.find((p) => p?.failStatus)?.backend).toBeUndefined();
    expect(t.warnings.join()).not.toContain("other-ns/svc:80");
  });
});

test("a table only read (probes: false) starts no active health check; a serving one does", async () => {
  const { activeCheckers } = await import("./health/active-registry.ts");
  const active = {
    path: "/healthz",
    method: "GET",
    expectedStatuses: [200],
    intervalMs: 60_000,
    timeoutMs: 1_000,
    unhealthyThreshold: 3,
    healthyThreshold: 1,
  };
  const m = model(
    [listener([vhost("a.test", [route("r", match("/"), forwardTo("probed"))])])],
    [
      backend("probed", [1], {
        healthCheck: { source: { kind: "BackendTrafficPolicy", namespace: "test", name: "p" }, active },
      }),
    ],
  );
  compile(m, { probes: false });
  expect([...activeCheckers()].length).toBe(0);
  compile(m);
  expect([...activeCheckers()].length).toBe(1);
  // Leaves no timer behind: a table without the backend stops its checker.
  compile(model([]));
  expect([...activeCheckers()].length).toBe(0);
});
