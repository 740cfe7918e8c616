import { describe, expect, test } from "bun:test";
import type { Route, SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";
import { hasLimitAnnotation } from "./request-rate.ts";
import { responseBandwidthFamily } from "./response-bandwidth.ts";
import { editedRoute, readRouteEdits } from "./route-edits.ts";

const ref: SourceRef = { kind: "Ingress", namespace: "shop", name: "files" };

function ingressWith(annotations: Record<string, string>): Ingress {
  const prefixed = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [NGINX_PREFIX + k, v]));
  return { metadata: { name: "files", namespace: "shop", annotations: prefixed } } as unknown as Ingress;
}

const route: Route = {
  name: "ingress/shop/files/rule/0/path/0",
  source: ref,
  match: { path: { type: "Prefix", value: "/" }, headers: [], queryParams: [] },
  filters: [],
  action: { kind: "Forward", backends: [{ backendId: "shop/files:80", weight: 1, filters: [] }] },
};

/** The route's bandwidth as the annotations leave it, and the problems' messages. */
function read(annotations: Record<string, string>) {
  const { edit, problems } = readRouteEdits(ingressWith(annotations), ref, [responseBandwidthFamily]);
  return { bandwidth: editedRoute(route, edit).responseBandwidth, problems: problems.map((p) => p.message) };
}

describe("limit-rate and limit-rate-after", () => {
  test("KiB as nginx's `k` reads them: limit-rate 64 after 32 → 65536 B/s after 32768 B", () => {
    expect(read({ "limit-rate": "64", "limit-rate-after": "32" })).toEqual({
      bandwidth: { bytesPerSecond: 65536, fullSpeedBytes: 32768 },
      problems: [],
    });
  });

  test("limit-rate alone paces from the first byte", () => {
    expect(read({ "limit-rate": "1" }).bandwidth).toEqual({ bytesPerSecond: 1024, fullSpeedBytes: 0 });
  });

  test("Go's Atoi forms: a sign and surrounding space are taken", () => {
    expect(read({ "limit-rate": " +8 " }).bandwidth).toEqual({ bytesPerSecond: 8192, fullSpeedBytes: 0 });
  });

  test('limit-rate "0" is no limit, and limit-rate-after alone limits nothing (as in nginx): said, not dropped', () => {
    const lone = `annotation ${NGINX_PREFIX}limit-rate-after "10": without a limit-rate above 0 it paces nothing; not applied`;
    expect(read({ "limit-rate": "0", "limit-rate-after": "10" })).toEqual({
      bandwidth: undefined,
      problems: [lone],
    });
    expect(read({ "limit-rate-after": "10" })).toEqual({ bandwidth: undefined, problems: [lone] });
    expect(read({ "limit-rate": "0" })).toEqual({ bandwidth: undefined, problems: [] });
    // Nothing asked for: nothing to say.
    expect(read({ "limit-rate-after": "0" })).toEqual({ bandwidth: undefined, problems: [] });
  });

  test("a refused limit-rate is reported once, not again through its limit-rate-after", () => {
    expect(read({ "limit-rate": "abc", "limit-rate-after": "10" }).problems).toEqual([
      expect.stringContaining('limit-rate "abc"'),
    ]);
  });

  test.each(["abc", "-1", "1.5", "64k", "", "1234567890"])(
    "limit-rate %p is refused, naming the value",
    (v) => {
      const { bandwidth, problems } = read({ "limit-rate": v });
      expect(bandwidth).toBeUndefined();
      expect(problems).toEqual([
        `annotation ${NGINX_PREFIX}limit-rate ${JSON.stringify(v)}: must be a whole number of kilobytes (KiB) from 0 to 999999999; not applied`,
      ]);
    },
  );

  test("a refused limit-rate-after leaves the rate, paced from the first byte", () => {
    const { bandwidth, problems } = read({ "limit-rate": "16", "limit-rate-after": "-5" });
    expect(bandwidth).toEqual({ bytesPerSecond: 16384, fullSpeedBytes: 0 });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('limit-rate-after "-5"');
  });

  test("they are not access controls: an Ingress with only them asks for no rate limit of its own", () => {
    expect(hasLimitAnnotation(ingressWith({ "limit-rate": "64", "limit-rate-after": "32" }))).toBe(false);
    expect(hasLimitAnnotation(ingressWith({ "limit-rate": "64", "limit-rps": "5" }))).toBe(true);
  });
});
