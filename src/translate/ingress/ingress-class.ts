import type { Ingress, IngressClass } from "../../sources/schema/networking.ts";
import { annotationOf, arrayOf, nameOf } from "../common/objects.ts";

/** The options that decide which Ingresses are ours (a subset of TranslateOptions). */
export interface ClassSelection {
  readonly ingressClass: string;
  readonly ingressController: string;
  readonly watchIngressWithoutClass: boolean;
}

export const legacyClassAnnotation = "kubernetes.io/ingress.class";
export const defaultClassAnnotation = "ingressclass.kubernetes.io/is-default-class";

/** The class an Ingress names: `spec.ingressClassName`, else the legacy annotation; "" counts as none. */
export function classNameOf(ingress: Ingress): string | undefined {
  const byField = ingress.spec?.ingressClassName;
  if (typeof byField === "string" && byField !== "") return byField;
  const byAnnotation = annotationOf(ingress, legacyClassAnnotation);
  return byAnnotation !== undefined && byAnnotation !== "" ? byAnnotation : undefined;
}

/**
 * Whether an Ingress is ours to serve.
 * - It names a class: ours when that name is `ingressClass` (ours even with no IngressClass object, so
 *   folder mode needs none), or names an IngressClass whose `spec.controller` is `ingressController`.
 * - It names none: ours when one of our IngressClasses is marked default
 *   (`ingressclass.kubernetes.io/is-default-class: "true"`), or when `watchIngressWithoutClass` is set.
 * Anything else belongs to another controller and is ignored without a word.
 */
export function isOurIngress(
  ingress: Ingress,
  classes: readonly IngressClass[],
  options: ClassSelection,
): boolean {
  const ours = (cls: IngressClass) => cls?.spec?.controller === options.ingressController;
  const name = classNameOf(ingress);
  if (name !== undefined) {
    return name === options.ingressClass || classes.some((c) => nameOf(c) === name && ours(c));
  }
  if (options.watchIngressWithoutClass) return true;
  return classes.some((c) => ours(c) && annotationOf(c, defaultClassAnnotation) === "true");
}

export function selectIngresses(
  ingresses: readonly Ingress[],
  classes: readonly IngressClass[],
  options: ClassSelection,
): Ingress[] {
  const cls = arrayOf(classes);
  return arrayOf(ingresses).filter((ing) => ing?.metadata !== undefined && isOurIngress(ing, cls, options));
}
