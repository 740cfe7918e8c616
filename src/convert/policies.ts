/**
 * The guards of the Ingress routes as gatehouse.dev policies on the HTTPRoutes, since Gateway API has no
 * field for them: the Ingress's own annotations (basic auth, source ranges, `limit-*`, ModSecurity) become
 * one AuthPolicy, one RateLimitPolicy and one WAFPolicy per Ingress, named as the Ingress, and a policy
 * object that guarded the Ingress (a targetRef, or `gatehouse.dev/auth-policy`) is written again with the
 * HTTPRoutes added to its targetRefs. A policy covering only some rules of an HTTPRoute targets those
 * rules by name. Guards that have no such field fail closed: a client certificate requirement becomes a
 * deny-every-address list (403), never an open route.
 */
import type { ExternalAuth, IPAccessList, Route, RouteRateLimit, SourceRef } from "../model/index.ts";
import { AUTH_SECRET, authSecretKey } from "../sources/nginx-references.ts";
import type { ResourceSnapshot } from "../sources/snapshot.ts";
import { annotationOf, nameOf, namespaceOf } from "../translate/common/objects.ts";
import { compareStrings } from "../translate/common/sort.ts";
import { NGINX_PREFIX } from "../translate/ingress/annotations/nginx-annotations.ts";
import type { Findings } from "./findings.ts";
import type { ConvertedRoute } from "./httproutes.ts";
import { convertedRuleName, NamePicker } from "./names.ts";
import { isRefusal } from "./rules.ts";
import { wafSpec } from "./waf.ts";

type Json = Record<string, unknown>;

const DENY_EVERY_ADDRESS = ["0.0.0.0/0", "::/0"];
const HTTPROUTE_GROUP = "gateway.networking.k8s.io";

/** One policy to write: either made from the Ingress, or a copy of an input policy. */
interface PolicyPlan {
  readonly kind: "AuthPolicy" | "RateLimitPolicy" | "WAFPolicy";
  readonly namespace: string;
  readonly ingress?: SourceRef;
  /** The spec without targetRefs (made), or the input policy (copied). */
  readonly spec?: Json;
  readonly copyOf?: SourceRef;
  readonly targets: Map<string, Set<number>>;
}

export function convertPolicies(
  routes: readonly ConvertedRoute[],
  snapshot: ResourceSnapshot,
  findings: Findings,
): Json[] {
  const plans = new Map<string, PolicyPlan>();
  const want = (key: string, make: () => Omit<PolicyPlan, "targets">, route: string, rule: number) => {
    const plan = plans.get(key) ?? { ...make(), targets: new Map() };
    const rules = plan.targets.get(route) ?? new Set<number>();
    rules.add(rule);
    plan.targets.set(route, rules);
    plans.set(key, plan);
  };
  for (const cr of routes) {
    const ns = cr.ingress.namespace;
    cr.routes.forEach((r, i) => {
      const made = madeAuthSpec(r, cr.ingress, snapshot, findings);
      const policyAuth = r.auth && r.auth.policy.kind !== "Ingress" ? r.auth.policy : undefined;
      const policyLists = (r.ipAccess ?? []).filter((l) => l.source.kind !== "Ingress").map((l) => l.source);
      const copies = [...(policyAuth ? [policyAuth] : []), ...policyLists];
      if (made !== undefined && copies.length > 0)
        findings.add(
          cr.ingress,
          `the Ingress's own access annotations and AuthPolicy ${copies[0]?.name} both guard it: both are written as AuthPolicies on the HTTPRoute, where only one applies`,
        );
      if (made !== undefined)
        want(
          `A\n${ns}/${cr.ingress.name}\n${JSON.stringify(made)}`,
          () => ({ kind: "AuthPolicy", namespace: ns, ingress: cr.ingress, spec: made }),
          cr.name,
          i,
        );
      for (const p of copies)
        want(
          `A\n${p.namespace}/${p.name}`,
          () => ({ kind: "AuthPolicy", namespace: p.namespace, copyOf: p }),
          cr.name,
          i,
        );
      const rl = r.rateLimit;
      if (rl && rl.source.kind === "Ingress") {
        const spec = rateLimitSpec(rl, cr.ingress, findings);
        want(
          `R\n${ns}/${cr.ingress.name}\n${JSON.stringify(spec)}`,
          () => ({ kind: "RateLimitPolicy", namespace: ns, ingress: cr.ingress, spec }),
          cr.name,
          i,
        );
      } else if (rl) {
        want(
          `R\n${rl.source.namespace}/${rl.source.name}`,
          () => ({ kind: "RateLimitPolicy", namespace: rl.source.namespace, copyOf: rl.source }),
          cr.name,
          i,
        );
      }
      const waf = r.waf;
      if (waf && waf.source.kind === "Ingress") {
        const spec = wafSpec(waf, cr.ingress, snapshot, findings);
        want(
          `W\n${ns}/${cr.ingress.name}\n${JSON.stringify(spec)}`,
          () => ({ kind: "WAFPolicy", namespace: ns, ingress: cr.ingress, spec }),
          cr.name,
          i,
        );
      } else if (waf) {
        want(
          `W\n${waf.source.namespace}/${waf.source.name}`,
          () => ({ kind: "WAFPolicy", namespace: waf.source.namespace, copyOf: waf.source }),
          cr.name,
          i,
        );
      }
    });
  }
  const ruleCount = new Map(routes.map((r) => [`${r.name}\n${r.ingress.namespace}`, r]));
  const out: Json[] = [];
  const ingressNames = snapshot.ingresses.map((i) => `${namespaceOf(i)}/${nameOf(i)}`);
  const existing = (kind: PolicyPlan["kind"]) =>
    inputPolicies(snapshot, kind).map((p) => `${namespaceOf(p)}/${nameOf(p)}`);
  const pickers = {
    AuthPolicy: new NamePicker([...ingressNames, ...existing("AuthPolicy")]),
    RateLimitPolicy: new NamePicker([...ingressNames, ...existing("RateLimitPolicy")]),
    WAFPolicy: new NamePicker([...ingressNames, ...existing("WAFPolicy")]),
  };
  const sorted = [...plans.entries()].sort(([a], [b]) => compareStrings(a, b));
  for (const [, plan] of sorted) {
    const targetRefs: Json[] = [];
    for (const [routeName, rules] of [...plan.targets.entries()].sort(([a], [b]) => compareStrings(a, b))) {
      const cr = ruleCount.get(`${routeName}\n${plan.namespace}`);
      if (cr === undefined) continue;
      if (rules.size === cr.routes.length)
        targetRefs.push({ group: HTTPROUTE_GROUP, kind: "HTTPRoute", name: routeName });
      else {
        nameRules(cr);
        for (const i of [...rules].sort((a, b) => a - b))
          targetRefs.push({
            group: HTTPROUTE_GROUP,
            kind: "HTTPRoute",
            name: routeName,
            sectionName: convertedRuleName(i),
          });
      }
    }
    out.push(...written(plan, targetRefs, snapshot, pickers[plan.kind], existing(plan.kind), findings));
  }
  return out;
}

/** At most this many targetRefs in one policy (the CRDs' maxItems). */
const MAX_TARGETS = 16;

/**
 * The policies a plan is written as: a copy keeps its name and spec, and takes as many of the HTTPRoutes
 * as fit; a made one takes the Ingress's name. Targets beyond 16 go to more policies of the same spec
 * (`<name>-2`…), never left unguarded.
 */
function written(
  plan: PolicyPlan,
  targets: readonly Json[],
  snapshot: ResourceSnapshot,
  picker: NamePicker,
  existing: readonly string[],
  findings: Findings,
): Json[] {
  const policy = (name: string, spec: Json, targetRefs: readonly Json[]) => ({
    apiVersion: "gatehouse.dev/v1alpha1",
    kind: plan.kind,
    metadata: { name, namespace: plan.namespace },
    spec: { ...spec, targetRefs },
  });
  const chunks = (list: readonly Json[]) =>
    Array.from({ length: Math.ceil(list.length / MAX_TARGETS) }, (_, k) =>
      list.slice(k * MAX_TARGETS, (k + 1) * MAX_TARGETS),
    );
  const out: Json[] = [];
  let about: SourceRef;
  let spec: Json;
  if (plan.copyOf !== undefined) {
    about = plan.copyOf;
    const original = inputPolicies(snapshot, plan.kind).find(
      (p) => namespaceOf(p) === about.namespace && nameOf(p) === about.name,
    );
    const own = (original?.spec.targetRefs ?? []) as Json[];
    spec = (original?.spec ?? {}) as Json;
    const room = Math.max(0, MAX_TARGETS - own.length);
    out.push(policy(about.name, spec, [...own, ...targets.slice(0, room)]));
    for (const chunk of chunks(targets.slice(room)))
      out.push(policy(picker.pick(about.namespace, about.name, false), spec, chunk));
  } else {
    about = plan.ingress as SourceRef;
    spec = plan.spec ?? {};
    // The Ingress's own name, unless a policy of that name is written again (then `-2`…).
    const own = !existing.includes(`${about.namespace}/${about.name}`);
    for (const [k, chunk] of chunks(targets).entries())
      out.push(policy(picker.pick(about.namespace, about.name, own && k === 0), spec, chunk));
  }
  if (out.length > 1 && plan.kind === "RateLimitPolicy" && spec.shared === true)
    findings.add(
      about,
      `the one shared count of ${plan.kind} ${about.name} is split across ${out.length} policies (at most ${MAX_TARGETS} targets each)`,
    );
  return out;
}

/** The input's policies of a kind convert writes. */
function inputPolicies(
  snapshot: ResourceSnapshot,
  kind: PolicyPlan["kind"],
): readonly { metadata: { name: string; namespace?: string | undefined }; spec: { targetRefs?: unknown } }[] {
  if (kind === "AuthPolicy") return snapshot.authPolicies;
  return kind === "RateLimitPolicy" ? snapshot.rateLimitPolicies : (snapshot.wafPolicies ?? []);
}

/** Gives every rule of the route its name (a policy targets some of them). */
function nameRules(cr: ConvertedRoute): void {
  const rules = (cr.object.spec as { rules: Json[] }).rules;
  rules.forEach((rule, i) => {
    rule.name = convertedRuleName(i);
  });
}

/** The AuthPolicy spec (without targetRefs) for the guards the Ingress's own annotations put on `r`. */
function madeAuthSpec(
  r: Route,
  ingress: SourceRef,
  snapshot: ResourceSnapshot,
  findings: Findings,
): Json | undefined {
  const spec: Json = {};
  const auth = r.auth?.policy.kind === "Ingress" ? r.auth : undefined;
  const ing = snapshot.ingresses.find(
    (i) => namespaceOf(i) === ingress.namespace && nameOf(i) === ingress.name,
  );
  if (auth) {
    const secret = ing
      ? authSecretKey(annotationOf(ing, NGINX_PREFIX + AUTH_SECRET) ?? "", ingress.namespace)
      : undefined;
    const basicSecret = secret !== undefined && "key" in secret ? secret.key : undefined;
    const usable = auth.basic === undefined || basicSecret !== undefined;
    if (auth.failClosed === undefined && usable && (auth.basic || auth.external)) {
      if (auth.basic && basicSecret !== undefined) {
        const name = basicSecret.slice(basicSecret.indexOf("/") + 1);
        const type = ing ? annotationOf(ing, `${NGINX_PREFIX}auth-secret-type`)?.trim() : undefined;
        spec.basicAuth = {
          secretRef: { name },
          ...(type === "auth-map" ? { format: "Map" } : {}),
          realm: auth.basic.realm,
        };
      }
      if (auth.external) spec.externalAuth = externalAuthSpec(auth.external);
    } else {
      // No provider: the policy fails closed (401), as the Ingress's routes did.
      findings.add(
        ingress,
        `authentication that cannot be enforced as written (${auth.failClosed ?? "no usable Secret"}): written as an AuthPolicy without a provider, which answers 401 as the Ingress did`,
        "note",
      );
    }
    if (auth.satisfy === "Any") spec.satisfy = "Any";
  }
  const lists = (r.ipAccess ?? []).filter((l) => l.source.kind === "Ingress");
  const merged = mergeLists(lists);
  if (merged.allow.length > 0) spec.ipAllowList = merged.allow;
  if (merged.deny.length > 0) spec.ipDenyList = merged.deny;
  if (isRefusal(r)) spec.ipDenyList = DENY_EVERY_ADDRESS;
  if (r.clientCertificate) {
    findings.add(
      ingress,
      "the client certificate requirement (auth-tls-*): Gateway API checks client certificates per listener only; written as an AuthPolicy denying every address (403) until the Gateway's listener asks for them",
    );
    spec.ipDenyList = DENY_EVERY_ADDRESS;
  }
  return Object.keys(spec).length > 0 || auth ? spec : undefined;
}

/** The Ingress's address lists as one allow and one deny list; an unreadable one denies every address. */
function mergeLists(lists: readonly IPAccessList[]): { allow: string[]; deny: string[] } {
  if (lists.some((l) => l.invalid !== undefined)) return { allow: [], deny: DENY_EVERY_ADDRESS };
  const allows = lists.filter((l) => l.allow.length > 0);
  // Two allow lists admit only what both admit; one list written is the first, the narrowest is not computed.
  return { allow: [...(allows[0]?.allow ?? [])], deny: lists.flatMap((l) => l.deny) };
}

/** The RateLimitPolicy spec (without targetRefs) of the Ingress's `limit-*` annotations. */
function rateLimitSpec(rl: RouteRateLimit, ingress: SourceRef, findings: Findings): Json {
  // An invalid limit answers 500 on every request; a policy without rules is invalid the same way.
  if (rl.invalid !== undefined) return { rules: [] };
  if (rl.rules.some((r) => r.exemptCIDRs !== undefined))
    findings.add(
      ingress,
      "exempt clients that differ between limit-allowlist and global-rate-limit-ignored-cidrs: a RateLimitPolicy has one exempt list, written from limit-allowlist",
    );
  return {
    rules: rl.rules.map((r) => ({
      name: r.name,
      limit: r.limit,
      window: `${r.windowSeconds}s`,
      burst: r.burst,
      keys: r.keys.map(keyText),
    })),
    // Ingress limits count every path of the Ingress in one bucket, as a shared policy does.
    shared: true,
    ...(rl.clientIP.trustedProxies.length > 0
      ? { clientIP: { trustedProxies: [...rl.clientIP.trustedProxies] } }
      : {}),
    ...(rl.exemptCIDRs.length > 0 ? { exempt: [...rl.exemptCIDRs] } : {}),
    failureMode: rl.failureMode.toLowerCase(),
    ...(rl.shadow ? { shadow: true } : {}),
    ...(rl.hideHeaders ? { hideHeaders: true } : {}),
  };
}

function keyText(k: RouteRateLimit["rules"][number]["keys"][number]): string {
  switch (k.source) {
    case "ClientIP":
      return "client-ip";
    case "Header":
      return `header:${k.name}`;
    case "Claim":
      return `claim:${k.name}`;
    case "Path":
      return "path";
    case "Method":
      return "method";
    case "Route":
      return "route";
  }
}

/** The model's forward authentication as AuthPolicy `spec.externalAuth` (the same fields, defaults left out). */
function externalAuthSpec(e: ExternalAuth): Json {
  const durations = new Map<number, string[]>();
  for (const [status, seconds] of Object.entries(e.cache?.seconds ?? {}))
    durations.set(seconds, [...(durations.get(seconds) ?? []), status]);
  return {
    url: e.url,
    ...(e.method !== undefined ? { method: e.method } : {}),
    ...(e.signinURL !== undefined ? { signinURL: e.signinURL } : {}),
    ...(e.signinRedirectParam !== "rd" ? { signinRedirectParam: e.signinRedirectParam } : {}),
    ...(e.responseHeaders.length > 0 ? { responseHeaders: [...e.responseHeaders] } : {}),
    ...(e.requestRedirect !== undefined ? { requestRedirect: e.requestRedirect } : {}),
    ...(e.alwaysSetCookie ? { alwaysSetCookie: true } : {}),
    timeoutMs: e.timeoutMs,
    ...(e.cache !== undefined
      ? {
          cache: {
            key: e.cache.key,
            durations: [...durations]
              .map(([seconds, statuses]) => `${statuses.join(" ")} ${seconds}s`)
              .join(", "),
          },
        }
      : {}),
  };
}
