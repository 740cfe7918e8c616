import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { gateway, httpRoute } from "./gateway.ts";
import { parseObject, unknownFieldsWarning } from "./index.ts";
import { describeUnknownFields, openObject, unknownFields } from "./unknown-fields.ts";

describe("unknownFields", () => {
  const item = z.object({ name: z.string(), port: z.number().optional() }).loose();
  const schema = z
    .object({
      items: z.array(item).optional(),
      grid: z.array(z.array(item)).optional(),
      byName: z.record(z.string(), item).optional(),
      anything: z.unknown().optional(),
      maybe: item.nullable().optional(),
    })
    .loose();

  test("reports keys the shape lacks, through nested arrays, records and wrappers", () => {
    const value = {
      itemz: [],
      items: [{ name: "a" }, { name: "b", prot: 1 }],
      grid: [[{ name: "c" }], [{ name: "d", x: 1, y: 2 }]],
      byName: { e: { name: "e", nmae: "e" } },
      maybe: { name: "f", extra: true },
    };
    expect(unknownFields(schema, value).paths).toEqual([
      "itemz",
      "items[1].prot",
      "grid[1][0].x",
      "grid[1][0].y",
      "byName.e.nmae",
      "maybe.extra",
    ]);
  });

  test("z.unknown(), null and values of the wrong type stop the walk", () => {
    const value = { anything: { deep: { x: 1 } }, maybe: null, items: "not an array", grid: [null, [1]] };
    expect(unknownFields(schema, value)).toEqual({ paths: [], more: 0 });
  });

  test("a union is walked as the first option the value is valid for", () => {
    const u = z.object({
      ref: z.union([
        z.string(),
        z.object({ kind: z.literal("A"), a: z.string() }).loose(),
        z.object({ kind: z.literal("B"), b: z.number() }).loose(),
      ]),
    });
    expect(unknownFields(u, { ref: "plain" }).paths).toEqual([]);
    expect(unknownFields(u, { ref: { kind: "B", b: 1, a: "x" } }).paths).toEqual(["ref.a"]);
    const d = z.object({
      ref: z.discriminatedUnion("kind", [
        z.object({ kind: z.literal("A"), a: z.string() }),
        z.object({ kind: z.literal("B"), b: z.number() }),
      ]),
    });
    expect(unknownFields(d, { ref: { kind: "A", a: "x", b: 2 } }).paths).toEqual(["ref.b"]);
  });

  test("an open object and a typed catchall are not reported; strip and strict objects are", () => {
    const s = z.object({
      meta: openObject(z.object({ name: z.string() }).loose()),
      labels: z.object({}).catchall(z.string()),
      typed: z.object({}).catchall(item),
      stripped: z.object({ a: z.string() }),
      strict: z.object({ a: z.string() }).strict(),
    });
    const value = {
      meta: { name: "n", uid: "u" },
      labels: { a: "b" },
      typed: { one: { name: "x", typo: 1 } },
      stripped: { a: "a", b: "b" },
      strict: { a: "a", c: "c" },
    };
    expect(unknownFields(s, value).paths).toEqual(["typed.one.typo", "stripped.b", "strict.c"]);
  });

  test("the cap keeps the first paths and counts the rest; long keys are cut", () => {
    const many = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`k${i}`, i]));
    const found = unknownFields(z.object({}).loose(), many, 3);
    expect(found).toEqual({ paths: ["k0", "k1", "k2"], more: 22 });
    expect(describeUnknownFields(found)).toBe(
      "k0: unknown field, not read; k1: unknown field, not read; k2: unknown field, not read; and 22 more unknown fields",
    );
    expect(unknownFields(z.object({}).loose(), many).paths).toHaveLength(10);
    const long = unknownFields(z.object({}).loose(), { ["x".repeat(1000)]: 1 }).paths[0] ?? "";
    expect(long).toBe(`${"x".repeat(64)}…`);
    expect(describeUnknownFields({ paths: [], more: 0 })).toBeUndefined();
  });

  test("a hostile object: wide and deep input costs no more than its size, paths stay capped", () => {
    const rules = Array.from({ length: 5000 }, (_, i) => ({ [`typo${i}`]: { nested: [[[i]]] } }));
    const found = unknownFields(httpRoute, {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: { name: "r" },
      spec: { rules },
    });
    expect(found.paths).toHaveLength(10);
    expect(found.more).toBe(4990);
  });
});

describe("unknownFieldsWarning on the Gateway API schemas", () => {
  const gw = {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "gw", namespace: "ns", uid: "1", managedFields: [{}], labels: { a: "b" } },
    spec: {
      gatewayClassName: "c",
      listners: [],
      listeners: [{ name: "https", port: 443, protocol: "HTTPS", tls: { optoins: {}, options: { x: 1 } } }],
      infrastructure: { labels: { any: "thing" } },
    },
    status: { whatever: true },
  };

  test("names the misspelt fields; metadata, status and unknown-typed fields are not judged", () => {
    expect(parseObject(gw).ok).toBe(true);
    expect(unknownFields(gateway, gw).paths).toEqual(["spec.listners", "spec.listeners[0].tls.optoins"]);
    expect(unknownFieldsWarning("Gateway", gw)).toBe(
      "spec.listners: unknown field, not read; spec.listeners[0].tls.optoins: unknown field, not read",
    );
  });

  test("a clean object and the kinds that refuse unknown fields themselves get none", () => {
    const clean = { ...gw, spec: { gatewayClassName: "c", listeners: [] } };
    expect(unknownFieldsWarning("Gateway", clean)).toBeUndefined();
    const policy = {
      apiVersion: "gatehouse.dev/v1alpha1",
      kind: "AuthPolicy",
      metadata: { name: "p" },
      spec: { targetRefs: [{ group: "", kind: "Service", name: "s" }], jwt: {} },
    };
    expect(unknownFieldsWarning("AuthPolicy", policy)).toBeUndefined();
  });
});
