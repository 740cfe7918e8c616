/**
 * Ingress translations kept from one translate to the next. translateIngress reads nothing but the
 * Ingress object, and the sources keep an unchanged object as the same object (the folder source's
 * parse cache, the informers' store), so a kept result is valid for as long as its object is alive:
 * a config change at 10k routes then translates only the Ingresses it touched (~8 ms of a ~45-ms
 * translate went to translating the same Ingresses again). Like the HTTPRoute memo, kept results are
 * shared between models and nothing downstream may change them; kept-check.ts checks that in tests.
 */
import type { Ingress } from "../../sources/schema/networking.ts";
import { checkingKept, checkKept } from "../common/kept-check.ts";
import { type IngressTranslation, translateIngress } from "./ingress.ts";

const kept = new WeakMap<Ingress, IngressTranslation>();

export function translateIngressKept(ingress: Ingress): IngressTranslation {
  // Anything that is not an object is translated (and reported) as it always was.
  if (typeof ingress !== "object" || ingress === null) return translateIngress(ingress);
  const k = kept.get(ingress);
  if (k !== undefined) {
    if (checkingKept)
      checkKept(
        `Ingress ${ingress.metadata?.namespace}/${ingress.metadata?.name}`,
        k,
        translateIngress(ingress),
      );
    return k;
  }
  const t = translateIngress(ingress);
  kept.set(ingress, t);
  return t;
}
