import { describe, expect, test } from "bun:test";
import type { Ingress, IngressClass } from "../../sources/schema/networking.ts";
import { isOurIngress } from "./ingress-class.ts";

const opts = {
  ingressClass: "gatehouse",
  ingressController: "gatehouse.dev/ingress-controller",
  watchIngressWithoutClass: false,
};

function ing(className?: string, annotation?: string): Ingress {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      name: "i",
      ...(annotation !== undefined ? { annotations: { "kubernetes.io/ingress.class": annotation } } : {}),
    },
    spec: className !== undefined ? { ingressClassName: className } : {},
  };
}

function cls(name: string, controller: string, isDefault = false): IngressClass {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "IngressClass",
    metadata: {
      name,
      ...(isDefault ? { annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } } : {}),
    },
    spec: { controller },
  };
}

describe("isOurIngress", () => {
  test("our class name is ours without any IngressClass object", () => {
    expect(isOurIngress(ing("gatehouse"), [], opts)).toBe(true);
    expect(isOurIngress(ing("nginx"), [], opts)).toBe(false);
  });

  test("a class name is ours when its IngressClass has our controller", () => {
    const classes = [cls("edge", opts.ingressController), cls("nginx", "k8s.io/ingress-nginx")];
    expect(isOurIngress(ing("edge"), classes, opts)).toBe(true);
    expect(isOurIngress(ing("nginx"), classes, opts)).toBe(false);
  });

  test("the legacy annotation counts only without ingressClassName", () => {
    expect(isOurIngress(ing(undefined, "gatehouse"), [], opts)).toBe(true);
    expect(isOurIngress(ing(undefined, "nginx"), [], opts)).toBe(false);
    expect(isOurIngress(ing("nginx", "gatehouse"), [], opts)).toBe(false);
    expect(isOurIngress(ing("gatehouse", "nginx"), [], opts)).toBe(true);
  });

  test("no class: ours only with our default IngressClass or watchIngressWithoutClass", () => {
    expect(isOurIngress(ing(), [], opts)).toBe(false);
    expect(isOurIngress(ing(), [cls("edge", opts.ingressController)], opts)).toBe(false);
    expect(isOurIngress(ing(), [cls("edge", opts.ingressController, true)], opts)).toBe(true);
    expect(isOurIngress(ing(), [cls("nginx", "k8s.io/ingress-nginx", true)], opts)).toBe(false);
    expect(isOurIngress(ing(), [], { ...opts, watchIngressWithoutClass: true })).toBe(true);
    expect(isOurIngress(ing(""), [], { ...opts, watchIngressWithoutClass: true })).toBe(true);
  });
});
