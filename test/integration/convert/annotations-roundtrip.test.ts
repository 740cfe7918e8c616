/**
 * Every live annotation case (ingress-annotations/*.cases.ts) through convert: the case's Ingress served on
 * one side, what convert wrote from it on the other (roundtrip.ts), the case's request sent to both, and
 * the answers compared (status, the path and Host the backend saw, Location, CORS headers, the auth
 * challenge). Cases convert cannot keep are listed in DIFFERS with the reason; for them the test requires
 * that convert said so (a finding about the case's Ingress) and that the answers do differ, so the list
 * only shrinks, and only when the conversion gets better.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { setLogSink } from "../../../src/observability/logger.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { type AnnotationCase, caseManifests, sendCase } from "../ingress-annotations/harness.ts";
import { observed, type RoundTrip, startRoundTrip } from "./roundtrip.ts";

const casesDir = join(import.meta.dir, "../ingress-annotations");
const cases: AnnotationCase[] = [];
const gatewayFlags: string[] = [];
for (const file of [...new Bun.Glob("*.cases.ts").scanSync(casesDir)].sort()) {
  const mod = (await import(join(casesDir, file))) as {
    cases: readonly AnnotationCase[];
    gatewayFlags?: readonly string[];
  };
  cases.push(...mod.cases);
  gatewayFlags.push(...(mod.gatewayFlags ?? []));
}

/** Cases whose answers differ after conversion, by name, with what convert cannot express. */
/**
 * Listed, and not sent: without the send timeout the converted side waits for the gateway's default (60 s)
 * before it answers, longer than a test; that convert said so is still checked.
 */
const NOT_SENT = "Gateway API has no send timeout (proxy-send-timeout)";
const DIFFERS: Readonly<Record<string, string>> = {
  "proxy-send-timeout: a backend that takes no body gets cut after that many seconds (504)": NOT_SENT,
};

forEachFront("convert keeps the annotation cases' behaviour", (front) => {
  let rt: RoundTrip;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    rt = await startRoundTrip((port) => caseManifests(cases, port), front, gatewayFlags);
  });

  afterAll(async () => {
    await rt?.stop();
    if (restore) setLogSink(restore);
  });

  test("every listed case exists", () => {
    const names = new Set(cases.map((c) => c.name));
    expect(Object.keys(DIFFERS).filter((n) => !names.has(n))).toEqual([]);
  });

  describe("each case", () => {
    cases.forEach((c, i) => {
      test(c.name, async () => {
        const why = DIFFERS[c.name];
        const said = rt.conversion.findings.filter(
          (f) => f.kind === "unconverted" && f.object.namespace === "cases" && f.object.name === `case-${i}`,
        );
        if (why !== undefined) expect(said.length).toBeGreaterThan(0);
        if (why === NOT_SENT) return;
        const before = observed(await sendCase(rt.ingress.port, i, c), rt.ingress);
        const after = observed(await sendCase(rt.gateway.port, i, c), rt.gateway);
        if (why === undefined) expect(after).toEqual(before);
        else expect(after).not.toEqual(before);
      });
    });
  });
});
