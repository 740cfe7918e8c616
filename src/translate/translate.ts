import type { GatewayModel, Listener, Problem, VirtualHost } from "../model/types.ts";
import type { ResourceSnapshot } from "../sources/snapshot.ts";
import { dropConflicts } from "./conflicts.ts";
import { hostsWithRootPrefix, placeDefaultBackends } from "./default-backend.ts";
import { type IngressTranslation, translateIngress } from "./ingress.ts";
import { selectIngresses } from "./ingress-class.ts";
import { arrayOf, sourceRef } from "./objects.ts";
import { internalProblem, sortProblems } from "./problems.ts";
import { indexSnapshot } from "./snapshot-index.ts";
import { compareStrings } from "./sort.ts";
import { buildVirtualHosts } from "./virtual-hosts.ts";

export interface TranslateOptions {
  /** Port of the default HTTP listener Ingress rules are served on (`--http-port`). */
  readonly httpPort: number;
  /** Port of the default HTTPS listener (`--https-port`); unused until Ingress TLS arrives. */
  readonly httpsPort: number;
  /** Our class name (`--ingress-class`): Ingresses naming it are ours even with no IngressClass object. */
  readonly ingressClass: string;
  /** The `spec.controller` of IngressClasses that are ours. */
  readonly ingressController: string;
  /** Serve Ingresses that name no class even when none of our IngressClasses is the default. */
  readonly watchIngressWithoutClass: boolean;
}

export const defaultTranslateOptions: TranslateOptions = {
  httpPort: 8080,
  httpsPort: 8443,
  ingressClass: "gatehouse",
  ingressController: "gatehouse.dev/ingress-controller",
  watchIngressWithoutClass: false,
};

export interface TranslateResult {
  readonly model: GatewayModel;
  /** Sorted by object; each object's problems in the order of its fields. */
  readonly problems: readonly Problem[];
}

const gatewaySource = { kind: "Gatehouse", namespace: "", name: "default" } as const;

/**
 * The snapshot as a route model. Pure (no clock, network or logging), deterministic (output does not
 * depend on input order) and total: it never throws; a broken object becomes Problems and the others go
 * on. The order of the steps is fixed:
 * 1. select the Ingresses of our class (ingress-class.ts), sorted by namespace/name;
 * 2. each Ingress alone: hosts, paths and backends validated into route candidates (ingress.ts);
 * 3. rule conflicts across all Ingresses: same host, path type and path, oldest wins (conflicts.ts);
 * 4. default backends placed where no rule serves `Prefix /`, then their conflicts (default-backend.ts);
 * 5. backends resolved through Services and EndpointSlices, routes grouped into virtual hosts and
 *    sorted by precedence (virtual-hosts.ts, backends.ts, sort.ts);
 * 6. the default HTTP listener, always present so the gateway listens even with no routes.
 * The HTTPS listener (Ingress `spec.tls`) will be built between steps 5 and 6 from the same hosts.
 */
export function translate(snapshot: ResourceSnapshot, options?: Partial<TranslateOptions>): TranslateResult {
  const opts = withDefaults(options);
  try {
    return translateSnapshot(snapshot, opts);
  } catch (err) {
    return {
      model: { listeners: [httpListener(opts, [])], backends: {} },
      problems: [internalProblem(gatewaySource, err)],
    };
  }
}

function translateSnapshot(snapshot: ResourceSnapshot, opts: TranslateOptions): TranslateResult {
  const problems: Problem[] = [];
  const index = indexSnapshot(snapshot);
  const ingresses = selectIngresses(arrayOf(snapshot?.ingresses), arrayOf(snapshot?.ingressClasses), opts);
  const translations: IngressTranslation[] = [];
  for (const ingress of ingresses) {
    try {
      const t = translateIngress(ingress);
      translations.push(t);
      problems.push(...t.problems);
    } catch (err) {
      problems.push(internalProblem(sourceRef("Ingress", ingress ?? {}), err));
    }
  }
  // Input order must not matter: later steps keep the order they are given.
  translations.sort(
    (a, b) => compareStrings(a.ref.namespace, b.ref.namespace) || compareStrings(a.ref.name, b.ref.name),
  );
  const rules = dropConflicts(translations.flatMap((t) => t.routes));
  const defaults = dropConflicts(placeDefaultBackends(translations, hostsWithRootPrefix(rules.kept)));
  const built = buildVirtualHosts([...rules.kept, ...defaults.kept], index);
  problems.push(...rules.problems, ...defaults.problems, ...built.problems);
  return {
    model: { listeners: [httpListener(opts, built.virtualHosts)], backends: built.backends },
    problems: sortProblems(problems),
  };
}

function httpListener(opts: TranslateOptions, virtualHosts: VirtualHost[]): Listener {
  return {
    name: "default/http",
    address: "",
    port: opts.httpPort,
    protocol: "HTTP",
    source: gatewaySource,
    virtualHosts,
  };
}

/** Options given, with defaults for the missing ones; an explicit `undefined` also takes the default. */
function withDefaults(options: Partial<TranslateOptions> | undefined): TranslateOptions {
  const given = Object.fromEntries(
    Object.entries(options ?? {}).filter(
      ([key, value]) => value !== undefined && key in defaultTranslateOptions,
    ),
  );
  return { ...defaultTranslateOptions, ...given };
}
