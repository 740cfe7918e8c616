import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setLogSink } from "../../observability/logger.ts";
import { FirstSeen } from "../skipped.ts";
import { loadFiles, loadFolder, logLoad, type ParseCache, readFolder } from "./load.ts";

const svc = (name: string, extra = "") =>
  `apiVersion: v1\nkind: Service\nmetadata: { name: ${name}${extra} }\nspec: { ports: [{ port: 80 }] }\n`;
const names = (objs: readonly unknown[]) =>
  objs.map((o) => {
    const m = (o as { metadata: { name: string; namespace?: string } }).metadata;
    return m.namespace ? `${m.namespace}/${m.name}` : m.name;
  });

let dir: string;
const logs: Record<string, unknown>[] = [];
const restore = setLogSink((line) => logs.push(JSON.parse(line)));
afterAll(() => setLogSink(restore));
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "gatehouse-load-"));
  logs.length = 0;
});
afterEach(() => rm(dir, { recursive: true, force: true }));
const put = (name: string, text: string) => writeFile(join(dir, name), text);

describe("loadFolder", () => {
  test("reads multi-document files recursively in path order, skipping dot files and empty docs", async () => {
    await mkdir(join(dir, "a"));
    await mkdir(join(dir, ".hidden"));
    await put("b.yaml", `${svc("b1")}---\n---\n# only a comment\n---\n${svc("b2")}`);
    await put("a/z.yml", svc("az"));
    await put("a.yaml", svc("a"));
    await put(".x.yaml", svc("dot"));
    await put(".hidden/h.yaml", svc("hidden"));
    await put("notes.txt", svc("txt"));
    const load = await loadFolder(dir);
    // "a.yaml" < "a/z.yml" < "b.yaml" in plain code-unit order.
    expect(names(load.snapshot.services)).toEqual(["default/a", "default/az", "default/b1", "default/b2"]);
    expect(load.errors).toEqual([]);
  });

  test("follows symlinked files, as in a ConfigMap volume (..data/)", async () => {
    await mkdir(join(dir, "..data"));
    await put("..data/svc.yaml", svc("mounted"));
    await symlink(join(dir, "..data/svc.yaml"), join(dir, "svc.yaml"));
    expect(names((await loadFolder(dir)).snapshot.services)).toEqual(["default/mounted"]);
  });

  test("expands kind: List and validates each item", async () => {
    await put(
      "list.yaml",
      `apiVersion: v1\nkind: List\nitems:\n${[svc("one"), svc("two", ", namespace: shop")]
        .map((s) => `  - ${s.trim().replaceAll("\n", "\n    ")}`)
        .join("\n")}\n`,
    );
    expect(names((await loadFolder(dir)).snapshot.services)).toEqual(["default/one", "shop/two"]);
  });

  test("unknown kinds are skipped and logged once per kind per load", async () => {
    const cm = (n: string) => `apiVersion: v1\nkind: ServiceAccount\nmetadata: { name: ${n} }\n`;
    await put("a.yaml", `${cm("a")}---\n${cm("b")}---\n${svc("web")}`);
    await put("b.yaml", `${cm("c")}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: { name: d }\n`);
    const load = await loadFolder(dir);
    expect(load.skippedKinds.map((s) => s.kind)).toEqual([
      "ServiceAccount",
      "ServiceAccount",
      "ServiceAccount",
      "Deployment",
    ]);
    const lines = logs.filter((l) => String(l.msg).startsWith("skipped"));
    expect(lines.map((l) => [l.kind, l.count, l.component])).toEqual([
      ["ServiceAccount", 3, "file-source"],
      ["Deployment", 1, "file-source"],
    ]);
    expect(names(load.snapshot.services)).toEqual(["default/web"]);
  });

  test("unknown fields: one warning per object while they stay, the object served", async () => {
    const gw = (typo: string) =>
      `apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: { name: gw, namespace: shop }\nspec: { gatewayClassName: c, ${typo}: [] }\n`;
    await put("gw.yaml", gw("listners"));
    const seen = new FirstSeen();
    const first = (await readFolder(dir)).load;
    expect(first.snapshot.gateways).toHaveLength(1);
    expect(first.errors).toEqual([]);
    logLoad(first, undefined, seen);
    logLoad((await readFolder(dir)).load, undefined, seen); // unchanged: no new line
    await put("gw.yaml", gw("listeners: [], lsteners"));
    logLoad((await readFolder(dir)).load, undefined, seen);
    const warned = logs.filter((l) => String(l.msg).startsWith("object loaded without fields"));
    expect(warned.map((l) => [l.name, l.level, l.reason])).toEqual([
      ["shop/gw", "warn", "spec.listners: unknown field, not read"],
      ["shop/gw", "warn", "spec.lsteners: unknown field, not read"],
    ]);
  });

  test("Gateway API kinds Gatehouse does not serve: named, warned once per object across loads", async () => {
    const grpc = (n: string) =>
      `apiVersion: gateway.networking.x-k8s.io/v1alpha1\nkind: XBackendTrafficPolicy\nmetadata: { name: ${n}, namespace: shop }\n`;
    await put("g.yaml", `${grpc("a")}---\n${grpc("b")}`);
    const seen = new FirstSeen();
    const first = (await readFolder(dir)).load;
    expect(first.skippedKinds.map((s) => [s.kind, s.namespace, s.name, s.docIndex])).toEqual([
      ["XBackendTrafficPolicy", "shop", "a", 0],
      ["XBackendTrafficPolicy", "shop", "b", 1],
    ]);
    logLoad(first, undefined, seen);
    logLoad((await readFolder(dir)).load, undefined, seen); // the same objects: no new line
    await put("g.yaml", `${grpc("a")}---\n${grpc("c")}`);
    logLoad((await readFolder(dir)).load, undefined, seen);
    const warned = logs.filter((l) =>
      String(l.msg).startsWith("XBackendTrafficPolicy is a Gateway API kind"),
    );
    expect(warned.map((l) => [l.name, l.level, l.doc])).toEqual([
      ["shop/a", "warn", 0],
      ["shop/b", "warn", 1],
      ["shop/c", "warn", 1],
    ]);
    expect(logs.filter((l) => String(l.msg).startsWith("skipped"))).toEqual([]);
  });

  test("an invalid object is reported with file, document index, kind, name and field path", async () => {
    const bad = `apiVersion: v1\nkind: Service\nmetadata: { name: bad, namespace: x }\nspec: { ports: [{ port: 99999 }] }\n`;
    await put("s.yaml", `${svc("ok")}---\n${bad}---\nkind: 3\n`);
    const load = await loadFolder(dir);
    expect(names(load.snapshot.services)).toEqual(["default/ok"]);
    expect(load.errors).toHaveLength(2);
    expect(load.errors[0]).toMatchObject({
      file: join(dir, "s.yaml"),
      docIndex: 1,
      kind: "Service",
      name: "x/bad",
    });
    expect(load.errors[0]?.reason).toContain("spec.ports[0].port");
    expect(load.errors[1]).toMatchObject({ docIndex: 2, reason: "kind: missing" });
    const warns = logs.filter((l) => l.level === "warn");
    expect(warns).toHaveLength(2);
    expect(warns[0]).toMatchObject({ file: join(dir, "s.yaml"), doc: 1, name: "x/bad" });
  });

  test("namespaced kinds default to namespace 'default'; IngressClass stays cluster-scoped", async () => {
    await put(
      "c.yaml",
      `apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: { name: gh }\nspec: { controller: x }\n---\n${svc("web")}---\napiVersion: v1\nkind: Secret\nmetadata: { name: s }\nstringData: { token: plain }\n`,
    );
    const { snapshot } = await loadFolder(dir);
    expect(snapshot.ingressClasses[0]?.metadata.namespace).toBeUndefined();
    expect(snapshot.services[0]?.metadata.namespace).toBe("default");
    expect(snapshot.secrets[0]).toMatchObject({
      metadata: { namespace: "default" },
      stringData: { token: "plain" },
    });
  });

  test("duplicates: the first in path order wins, later ones are reported", async () => {
    await put("a.yaml", svc("web", ", labels: { from: a }"));
    await put(
      "b.yaml",
      `${svc("web", ", namespace: default, labels: { from: b }")}---\n${svc("web", ", namespace: other")}`,
    );
    const load = await loadFolder(dir);
    expect(load.snapshot.services.map((s) => s.metadata.labels?.from ?? s.metadata.namespace)).toEqual([
      "a",
      "other",
    ]);
    expect(load.errors).toEqual([
      expect.objectContaining({
        file: join(dir, "b.yaml"),
        docIndex: 0,
        kind: "Service",
        name: "default/web",
      }),
    ]);
    expect(load.errors[0]?.reason).toContain(join(dir, "a.yaml"));
  });

  test("a missing folder rejects", async () => {
    await expect(loadFolder(join(dir, "nope"))).rejects.toThrow();
  });
});

describe("last good version (readFolder with memory)", () => {
  test("a YAML syntax error keeps the file's previous objects and reports the file", async () => {
    await put("a.yaml", `${svc("one")}---\n${svc("two")}`);
    await put("b.yaml", svc("other"));
    const first = await readFolder(dir);
    await put("a.yaml", `${svc("one")}---\nmetadata: [oops\n`);
    const second = await readFolder(dir, first.memory);
    expect(names(second.load.snapshot.services)).toEqual(["default/one", "default/two", "default/other"]);
    expect(second.load.errors).toHaveLength(1);
    expect(second.load.errors[0]).toMatchObject({ file: join(dir, "a.yaml"), docIndex: -1 });
    expect(second.load.errors[0]?.reason).toContain("keeps serving");
    // Still broken on the next read: the remembered objects survive.
    const third = await readFolder(dir, second.memory);
    expect(names(third.load.snapshot.services)).toEqual(["default/one", "default/two", "default/other"]);
    // Without memory (first read) a broken file serves nothing.
    expect(names((await readFolder(dir)).load.snapshot.services)).toEqual(["default/other"]);
  });

  test("an invalid document keeps the previous object of the same kind/namespace/name from that file", async () => {
    await put("a.yaml", `${svc("web", ", labels: { v: '1' }")}---\n${svc("api")}`);
    const first = await readFolder(dir);
    const broken = `apiVersion: v1\nkind: Service\nmetadata: { name: web, labels: { v: '2' } }\nspec: { ports: [{ port: 0 }] }\n`;
    await put("a.yaml", `${broken}---\n${svc("api", ", labels: { v: '2' }")}---\n${svc("new")}`);
    const second = await readFolder(dir, first.memory);
    const labels = second.load.snapshot.services.map(
      (s) => `${s.metadata.name}:${s.metadata.labels?.v ?? "-"}`,
    );
    expect(labels).toEqual(["web:1", "api:2", "new:-"]);
    expect(second.load.errors[0]).toMatchObject({ docIndex: 0, kind: "Service", name: "default/web" });
    expect(second.load.errors[0]?.reason).toContain("last good version keeps serving");
    // A renamed invalid object has no previous version: it is just left out.
    await put("a.yaml", broken.replace("name: web", "name: web2"));
    expect(names((await readFolder(dir, second.memory)).load.snapshot.services)).toEqual([]);
  });

  test("a deleted file's objects go away", async () => {
    await put("a.yaml", svc("a"));
    await put("b.yaml", svc("b"));
    const first = await readFolder(dir);
    await rm(join(dir, "a.yaml"));
    expect(names((await readFolder(dir, first.memory)).load.snapshot.services)).toEqual(["default/b"]);
  });
});

describe("loadFiles", () => {
  test("reads files and folders in the given order; a missing path is a whole-file error", async () => {
    await mkdir(join(dir, "d"));
    await put("d/x.yaml", svc("x"));
    await put("z.yaml", svc("z"));
    const load = await loadFiles([join(dir, "z.yaml"), join(dir, "d"), join(dir, "missing.yaml")]);
    expect(names(load.snapshot.services)).toEqual(["default/z", "default/x"]);
    expect(load.errors).toEqual([expect.objectContaining({ file: join(dir, "missing.yaml"), docIndex: -1 })]);
    expect(logs).toEqual([]);
  });
});

describe("readFolder with a parse cache", () => {
  test("unchanged files reuse their parse; changed and removed files do not", async () => {
    await put("a.yaml", svc("a"));
    await put("b.yaml", svc("b"));
    const cache: ParseCache = new Map();
    const first = await readFolder(dir, new Map(), cache);
    const parseA = cache.get(join(dir, "a.yaml"))?.parse;
    const parseB = cache.get(join(dir, "b.yaml"))?.parse;
    await put("b.yaml", svc("b2"));
    await put("c.yaml", svc("c"));
    const second = await readFolder(dir, first.memory, cache);
    expect(names(second.load.snapshot.services)).toEqual(["default/a", "default/b2", "default/c"]);
    expect(cache.get(join(dir, "a.yaml"))?.parse).toBe(parseA as never);
    expect(cache.get(join(dir, "b.yaml"))?.parse).not.toBe(parseB as never);
    await rm(join(dir, "a.yaml"));
    const third = await readFolder(dir, second.memory, cache);
    expect(names(third.load.snapshot.services)).toEqual(["default/b2", "default/c"]);
    expect([...cache.keys()].sort()).toEqual([join(dir, "b.yaml"), join(dir, "c.yaml")]);
  });
});
