/**
 * Kept Ingress translations: the same object gives the same result object; a changed Ingress (a new
 * object, as every source delivers a change) is translated afresh, and the whole translate then equals
 * one of cloned objects (which can reuse nothing).
 */
import { expect, test } from "bun:test";
import { ingress as kubeIngress } from "../../../test/helpers/kube-fixtures.ts";
import type { Ingress } from "../../sources/schema/networking.ts";
import { emptySnapshot, type ResourceSnapshot } from "../../sources/snapshot.ts";
import { translate } from "../translate.ts";
import { translateIngressKept } from "./memo.ts";

/** The `--kube` tests' Ingress (one Prefix path to Service `web`), as the schema's type. */
const ingress = (host: string, path: string, name = "web"): Ingress =>
  kubeIngress(name, host, path, "web") as unknown as Ingress;

const snapshotOf = (ingresses: Ingress[]): ResourceSnapshot => ({ ...emptySnapshot, ingresses });

test("the same object is translated once; a changed one again", () => {
  const a = ingress("a.example", "/web");
  expect(translateIngressKept(a)).toBe(translateIngressKept(a));
  const b = ingress("a.example", "/shop");
  const tb = translateIngressKept(b);
  expect(tb).not.toBe(translateIngressKept(a));
  expect(tb.routes.map((r) => r.path.value)).toEqual(["/shop"]);
});

test("translate with kept Ingresses equals a translate of clones, change after change", () => {
  const other = ingress("b.example", "/", "other");
  const withDefault = ingress("c.example", "/api");
  (withDefault.spec as { defaultBackend?: unknown }).defaultBackend = {
    service: { name: "fallback", port: { number: 8080 } },
  };
  // Each version is a new object, as a source delivers a changed Ingress; `other` stays the same object.
  for (const current of [
    ingress("a.example", "/web"),
    ingress("a.example", "/web"),
    ingress("c.example", "/web"),
    withDefault,
    ingress("b.example", "/"),
  ]) {
    const kept = translate(snapshotOf([current, other]));
    const fresh = translate(snapshotOf(structuredClone([current, other])));
    expect(kept).toEqual(fresh);
  }
});
