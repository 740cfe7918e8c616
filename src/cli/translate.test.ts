/** `gatehouse translate -f` as a user runs it: the real CLI in a child process, on files in a temp folder. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";

const dir = mkdtempSync(join(tmpdir(), "gatehouse-translate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const good = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: good }
spec:
  ingressClassName: gatehouse
  rules:
    - host: good.example
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
`;
const typo = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: typo, namespace: shop }
spec:
  ingressClassName: gatehouse
  rulez: []
`;

async function translateCli(...files: string[]) {
  const args = files.flatMap((f) => (f.startsWith("--") ? [f] : ["-f", join(dir, f)]));
  const proc = Bun.spawn(["bun", join(import.meta.dir, "../main.ts"), "translate", ...args], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const out = (parse(stdout) ?? { model: null, problems: [] }) as {
    model: unknown;
    problems: Record<string, unknown>[];
  };
  // Translation's own problems (the Service `web` is not in these files) are not what is tested here.
  return { out, loaded: out.problems.filter((p) => "file" in p), stderr, code };
}

describe("gatehouse translate -f", () => {
  test("an unknown field is a problem in the YAML, with file, document and object; exit 1", async () => {
    writeFileSync(join(dir, "mixed.yaml"), `${good}---\n${typo}`);
    const { out, loaded, stderr, code } = await translateCli("mixed.yaml");
    expect(loaded).toEqual([
      {
        file: join(dir, "mixed.yaml"),
        document: 1,
        object: { kind: "Ingress", namespace: "shop", name: "typo" },
        reason: "InvalidObject",
        severity: "error",
        message: 'spec: unknown field(s) "rulez"',
      },
    ]);
    expect(JSON.stringify(out.model)).toContain("good.example"); // the valid document is still served
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toEqual(["gatehouse translate: 1 load problem (see problems)"]);
  });

  test("malformed YAML is a whole-file problem in the YAML; the other files still translate; exit 2", async () => {
    writeFileSync(join(dir, "broken.yaml"), `${good}---\nkind: Ingress\nmetadata: { name: [oops\n`);
    writeFileSync(join(dir, "good.yaml"), good);
    const { out, loaded, stderr, code } = await translateCli("broken.yaml", "good.yaml");
    expect(loaded).toHaveLength(1);
    expect(loaded[0]).toMatchObject({
      file: join(dir, "broken.yaml"),
      object: { kind: "", namespace: "", name: "" },
      reason: "InvalidFile",
      severity: "error",
    });
    expect(loaded[0]?.document).toBeUndefined();
    expect(String(loaded[0]?.message)).toStartWith("YAML syntax error in document 1:");
    expect(JSON.stringify(out.model)).toContain("good.example");
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });

  test("an unknown field of a Gateway API object is a warning: the object served, exit 0 (1 with --strict)", async () => {
    const route = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: r, namespace: shop }
spec:
  rules: [{ backendRef: [{ name: web, port: 80 }] }]
`;
    writeFileSync(join(dir, "route.yaml"), route);
    const { loaded, stderr, code } = await translateCli("route.yaml");
    expect(loaded).toEqual([
      {
        file: join(dir, "route.yaml"),
        document: 0,
        object: { kind: "HTTPRoute", namespace: "shop", name: "r" },
        reason: "UnknownField",
        severity: "warning",
        message: "spec.rules[0].backendRef: unknown field, not read",
      },
    ]);
    expect([stderr, code]).toEqual(["", 0]);
    expect((await translateCli("route.yaml", "--strict")).code).toBe(1);
  });

  test("no load problem: exit 0 and nothing on stderr", async () => {
    writeFileSync(join(dir, "good.yaml"), good);
    const { loaded, stderr, code } = await translateCli("good.yaml");
    expect([loaded, stderr, code]).toEqual([[], "", 0]);
  });

  test("serve's translation flags apply (class, ports), and serve-only flags are refused", async () => {
    writeFileSync(
      join(dir, "other.yaml"),
      good.replace("ingressClassName: gatehouse", "ingressClassName: edge"),
    );
    const plain = await translateCli("other.yaml");
    expect(JSON.stringify(plain.out.model)).not.toContain("good.example");
    const flagged = await translateCli("other.yaml", "--ingress-class=edge", "--http-port=9000");
    const model = JSON.stringify(flagged.out.model);
    expect(model).toContain("good.example");
    expect(model).toContain('"port":9000');
    const refused = await translateCli("other.yaml", "--workers=2");
    expect(refused.code).toBe(2);
  });

  describe("--strict", () => {
    const clean = `${good}---
apiVersion: v1
kind: Service
metadata: { name: web }
spec: { ports: [{ port: 80 }] }
`;
    const annotated = clean.replace(
      "metadata: { name: good }",
      'metadata: { name: good, annotations: { "nginx.ingress.kubernetes.io/opentelemetry-operation-name": "op" } }',
    );
    const tuned = clean.replace(
      "metadata: { name: good }",
      'metadata: { name: good, annotations: { "nginx.ingress.kubernetes.io/proxy-buffer-size": "16k" } }',
    );

    test("no problem at all: exit 0, as without it", async () => {
      writeFileSync(join(dir, "clean.yaml"), clean);
      const { out, stderr, code } = await translateCli("clean.yaml", "--strict");
      expect([out.problems, stderr, code]).toEqual([[], "", 0]);
    });

    test("a warning (an annotation not honoured): exit 1 with --strict, 0 without", async () => {
      writeFileSync(join(dir, "annotated.yaml"), annotated);
      const strict = await translateCli("annotated.yaml", "--strict");
      expect(strict.out.problems.map((p) => [p.reason, p.severity])).toEqual([
        ["AnnotationNotHonoured", "warning"],
      ]);
      expect(strict.code).toBe(1);
      expect(strict.stderr.trim()).toBe("gatehouse translate: 1 problem with --strict (see problems)");
      const plain = await translateCli("annotated.yaml");
      expect([plain.code, plain.stderr]).toEqual([0, ""]);
    });

    test("an info (an nginx tuning knob with no effect) does not fail --strict", async () => {
      writeFileSync(join(dir, "tuned.yaml"), tuned);
      const strict = await translateCli("tuned.yaml", "--strict");
      expect(strict.out.problems.map((p) => [p.reason, p.severity])).toEqual([
        ["AnnotationNoEffect", "info"],
      ]);
      expect([strict.code, strict.stderr]).toEqual([0, ""]);
    });

    test("a whole file unusable stays exit 2", async () => {
      writeFileSync(join(dir, "broken.yaml"), `${good}---\nkind: Ingress\nmetadata: { name: [oops\n`);
      expect((await translateCli("broken.yaml", "--strict")).code).toBe(2);
    });
  });

  test("all of a large output reaches a slow reader of the pipe before the process exits", async () => {
    const docs = Array.from({ length: 300 }, (_, i) =>
      good.replace("name: good", `name: good-${i}`).replace("good.example", `h${i}.example`),
    );
    const file = join(dir, "big.yaml");
    writeFileSync(file, docs.join("---\n"));
    const main = join(import.meta.dir, "../main.ts");
    const direct = Bun.spawnSync(["bun", main, "translate", "-f", file]).stdout.length;
    expect(direct).toBeGreaterThan(128 * 1024);
    // A reader that takes nothing for a second: what the process did not hand over before exiting is lost.
    const piped = Bun.spawn(["sh", "-c", `bun "${main}" translate -f "${file}" | (sleep 1; wc -c)`], {
      stdout: "pipe",
      stderr: "ignore",
    });
    const [out, code] = await Promise.all([new Response(piped.stdout).text(), piped.exited]);
    expect(code).toBe(0);
    expect(Number(out.trim())).toBe(direct);
  });
});
