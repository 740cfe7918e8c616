import { expect, test } from "bun:test";
import type { SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { mirrorFamily } from "./mirror.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";
import { readRouteEdits } from "./route-edits.ts";

const ref: SourceRef = { kind: "Ingress", namespace: "shop", name: "web" };

function read(annotations: Record<string, string>) {
  const prefixed = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [NGINX_PREFIX + k, v]));
  const ingress = {
    metadata: { name: "web", namespace: "shop", annotations: prefixed },
  } as unknown as Ingress;
  const { edit, problems } = readRouteEdits(ingress, ref, [mirrorFamily]);
  return { filters: edit?.filters ?? [], problems: problems.map((p) => `${p.reason}: ${p.message}`) };
}

test("mirror-target alone: every copy with its body, Host left to the target", () => {
  expect(read({ "mirror-target": "https://test.env.com$request_uri" })).toEqual({
    filters: [
      {
        kind: "RequestMirror",
        url: { scheme: "https", hostname: "test.env.com", port: 443, path: "$request_uri" },
        percent: 100,
      },
    ],
    problems: [],
  });
});

test("mirror-host and mirror-request-body off", () => {
  const { filters, problems } = read({
    "mirror-target": "https://1.2.3.4$request_uri",
    "mirror-host": "test.env.com",
    "mirror-request-body": "off",
  });
  expect(problems).toEqual([]);
  expect(filters).toEqual([
    {
      kind: "RequestMirror",
      url: { scheme: "https", hostname: "1.2.3.4", port: 443, path: "$request_uri" },
      percent: 100,
      host: "test.env.com",
      body: false,
    },
  ]);
  expect(read({ "mirror-target": "http://m", "mirror-request-body": " on " }).filters[0]).not.toHaveProperty(
    "body",
  );
});

test("bad values are InvalidAnnotation problems naming annotation and value", () => {
  const bad = read({ "mirror-target": "http://m/$remote_addr" });
  expect(bad.filters).toEqual([]);
  expect(bad.problems).toEqual([
    expect.stringContaining(
      'InvalidAnnotation: annotation nginx.ingress.kubernetes.io/mirror-target "http://m/$remote_addr": $remote_addr is not one of the variables Gatehouse fills',
    ),
  ]);
  // A refused Host or body setting leaves the mirror with its defaults, as ingress-nginx does.
  const partly = read({ "mirror-target": "http://m", "mirror-host": "a b", "mirror-request-body": "Off" });
  expect(partly.filters).toEqual([
    { kind: "RequestMirror", url: { scheme: "http", hostname: "m", port: 80, path: "" }, percent: 100 },
  ]);
  expect(partly.problems).toEqual([
    expect.stringContaining('mirror-request-body "Off": must be "on" or "off"'),
    expect.stringContaining('mirror-host "a b": is not a host name'),
  ]);
});

test("mirror-host without mirror-target is reported, an empty target asks for nothing", () => {
  expect(read({ "mirror-host": "x.example" })).toEqual({
    filters: [],
    problems: [expect.stringContaining('mirror-host "x.example": needs mirror-target')],
  });
  expect(read({ "mirror-target": "", "mirror-request-body": "off" })).toEqual({ filters: [], problems: [] });
});
