/**
 * A route's error pages (model/error-pages.ts) made ready for the request path: the codes as a set, the
 * error backend resolved, and the fixed X- fields built once. An error backend the fetch path cannot ask
 * as it asks it here (unknown, h2c, TLS) is reported and left out: the gateway's own errors answer then.
 */
import type { RouteErrorPages } from "../../model/index.ts";
import type { CompiledBackend, CompiledErrorPages } from "../table.ts";

export function compileErrorPages(
  routeName: string,
  pages: RouteErrorPages,
  backends: ReadonlyMap<string, CompiledBackend>,
  warn: (message: string) => void,
): CompiledErrorPages {
  let backend = backends.get(pages.backendId);
  if (backend === undefined) warn(`route ${routeName}: unknown error backend ${pages.backendId}`);
  else if (backend.h2c || backend.tls !== undefined) {
    warn(`route ${routeName}: error backend ${pages.backendId} speaks h2c or TLS, which error pages do not`);
    backend = undefined;
  }
  return {
    codes: new Set(pages.codes),
    backend,
    upstream: pages.upstream,
    fields: [
      ["x-namespace", pages.namespace],
      ["x-ingress-name", pages.ingressName],
      ["x-service-name", pages.serviceName],
      ["x-service-port", pages.servicePort],
    ],
  };
}
