import { expect, test } from "bun:test";
import type { BackendTLS } from "../../model/index.ts";
import { compile } from "../compile.ts";
import { backend, forwardTo, listener, match, model, route, vhost } from "../testing/model.ts";
import { isFastRoute } from "./plan.ts";

const tls: BackendTLS = {
  serverName: "b.example",
  source: { kind: "BackendTLSPolicy", namespace: "test", name: "p" },
};

test("TLS backends checked by name stay on the fast path; subjectAltNames and h2 go the full request path", () => {
  const table = compile(
    model(
      [
        listener([
          vhost("p.example", [
            route("plain", match("/plain"), forwardTo("plain")),
            route("tls", match("/tls"), forwardTo("tls")),
            route("san", match("/san"), forwardTo("san")),
            route("h2", match("/h2"), forwardTo("h2")),
          ]),
        ]),
      ],
      [
        backend("plain", [1]),
        backend("tls", [2], { tls }),
        backend("san", [3], { tls: { ...tls, subjectAltNames: [{ type: "URI", value: "spiffe://x" }] } }),
        backend("h2", [4], { protocol: "h2c", tls }),
      ],
    ),
  );
  const routes = table.listeners[0]?.hosts.exact.get("p.example")?.routes ?? [];
  expect(routes.map((r) => [r.name, isFastRoute(r)]).sort()).toEqual([
    ["h2", false],
    ["plain", true],
    ["san", false],
    ["tls", true],
  ]);
});
