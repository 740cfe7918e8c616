import { expect, test } from "bun:test";
import type { ConfigMap } from "../../sources/schema/core.ts";
import { emptySnapshot, type ResourceSnapshot } from "../../sources/snapshot.ts";
import { translate } from "../translate.ts";
import { errorBodies, MAX_ERROR_BODY_BYTES } from "./error-bodies.ts";

const configMap = (data: Record<string, string>, binaryData?: Record<string, string>): ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "errors", namespace: "ops" },
  data,
  ...(binaryData ? { binaryData } : {}),
});
const snapshot = (...configMaps: ConfigMap[]): ResourceSnapshot => ({ ...emptySnapshot, configMaps });

test("each <code>.<ext> key is a body with its extension's type; the model carries them", () => {
  const cm = configMap({ "404.html": "<p>gone</p>", "503.json": "{}", "504.txt": "slow", "502.xml": "<e/>" });
  const { bodies, problems } = errorBodies(snapshot(cm), "ops/errors");
  expect(problems).toEqual([]);
  expect(bodies).toEqual({
    "404": { contentType: "text/html; charset=utf-8", body: "<p>gone</p>" },
    "502": { contentType: "application/xml", body: "<e/>" },
    "503": { contentType: "application/json", body: "{}" },
    "504": { contentType: "text/plain; charset=utf-8", body: "slow" },
  });
  const result = translate(snapshot(cm), { errorPagesConfigMap: "ops/errors" });
  expect(result.model.errorBodies).toEqual(bodies);
  // Without the flag the model has no such field (and dumps as before).
  expect("errorBodies" in translate(snapshot(cm)).model).toBe(false);
});

test("bad keys, codes the gateway never makes, oversize bodies, a second body and binaryData: warned, left out", () => {
  const cm = configMap(
    {
      "404.html": "first",
      "404.json": "second",
      "index.html": "x",
      "404.pdf": "x",
      "429.json": "x",
      "503.html": "x".repeat(MAX_ERROR_BODY_BYTES + 1),
      "502.html": "é".repeat(MAX_ERROR_BODY_BYTES / 2),
    },
    { "500.html": "AAAA" },
  );
  const { bodies, problems } = errorBodies(snapshot(cm), "ops/errors");
  expect(bodies).toEqual({
    "404": { contentType: "text/html; charset=utf-8", body: "first" },
    "502": { contentType: "text/html; charset=utf-8", body: "é".repeat(MAX_ERROR_BODY_BYTES / 2) },
  });
  expect(problems.every((p) => p.severity === "warning" && p.reason === "InvalidErrorPage")).toBe(true);
  expect(problems.every((p) => p.object.kind === "ConfigMap" && p.object.name === "errors")).toBe(true);
  const said = problems.map((p) => p.message).join("\n");
  for (const part of [
    "binaryData key 500.html",
    "key 404.json: 404 already has a body",
    "key 404.pdf is not <code>.<html|json|txt|xml>",
    "key index.html is not",
    "key 429.json: 429 is not among the errors whose body can be replaced",
    `key 503.html: ${MAX_ERROR_BODY_BYTES + 1} bytes`,
  ])
    expect(said).toContain(part);
  expect(problems).toHaveLength(6);
});

test("a missing or unreadable ConfigMap is a warning and changes no code", () => {
  const missing = errorBodies(snapshot(), "ops/errors");
  expect(missing.bodies).toBeUndefined();
  expect(missing.problems[0]?.message).toContain("--error-pages-configmap ops/errors: not found");
  const unreadable = errorBodies(
    {
      ...emptySnapshot,
      unreadable: [{ kind: "ConfigMap", namespace: "ops", name: "errors", why: "403 Forbidden" }],
    },
    "ops/errors",
  );
  expect(unreadable.problems[0]?.message).toContain("unreadable (403 Forbidden)");
  expect(
    translate(snapshot(), { errorPagesConfigMap: "ops/errors" }).problems.map((p) => p.reason),
  ).toContain("InvalidErrorPage");
  expect(errorBodies(snapshot(), undefined)).toEqual({ bodies: undefined, problems: [] });
});
