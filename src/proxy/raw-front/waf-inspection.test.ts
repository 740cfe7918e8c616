import { expect, test } from "bun:test";
import type { CORSFilter, RouteWaf } from "../../model/index.ts";
import { compile } from "../compile.ts";
import { backend, forwardTo, listener, match, model, route, vhost } from "../testing/model.ts";
import { isFastRoute } from "./plan.ts";

const waf: RouteWaf = {
  source: { kind: "Ingress", namespace: "test", name: "web" },
  policy: "ingress/test/web",
  mode: "Enforce",
  coreRuleSet: false,
  paranoiaLevel: 1,
  inboundAnomalyThreshold: 5,
  excludedRuleIds: [],
  excludedRuleTags: [],
  requestBodyLimitBytes: 1024,
  requestBodyOverLimit: "Reject",
  maxArguments: 255,
};

test("a WAF route stays on the raw front; with a CORS filter it goes the full request path, as any guard", () => {
  const cors: CORSFilter = {
    kind: "CORS",
    allowOrigins: ["https://a.example"],
    allowMethods: [],
    allowHeaders: [],
    exposeHeaders: [],
    allowCredentials: false,
    maxAgeSeconds: 5,
  };
  const table = compile(
    model(
      [
        listener([
          vhost("p.example", [
            route("waf", match("/waf"), forwardTo("b"), { waf }),
            route("cors", match("/cors"), forwardTo("b"), { waf, filters: [cors] }),
          ]),
        ]),
      ],
      [backend("b", [1])],
    ),
  );
  const routes = table.listeners[0]?.hosts.exact.get("p.example")?.routes ?? [];
  expect(routes.map((r) => [r.name, isFastRoute(r), r.waf?.failure]).sort()).toEqual([
    ["cors", false, undefined],
    ["waf", true, undefined],
  ]);
});
