import { describe, expect, test } from "bun:test";
import type { SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { auditAnnotations, failClosedAction, MAX_ANNOTATION_PROBLEMS } from "./audit.ts";
import { NGINX_ANNOTATIONS, NGINX_PREFIX } from "./nginx-annotations.ts";

const ref: SourceRef = { kind: "Ingress", namespace: "shop", name: "web" };
const nginx = (name: string) => `${NGINX_PREFIX}${name}`;

/** A fresh Ingress object each time: audits are kept per object. */
function audit(annotations: Record<string, string>) {
  const ingress = { metadata: { name: "web", namespace: "shop", annotations } } as unknown as Ingress;
  return auditAnnotations(ingress, ref);
}

const reasons = (annotations: Record<string, string>) => audit(annotations).problems.map((p) => p.reason);

describe("the annotation table", () => {
  test("ingress-nginx's documented annotations are all there, each with a note", () => {
    // A sample of the 130 documented ones, across families; the table holds them all (docs/ingress.md).
    for (const name of [
      "rewrite-target",
      "use-regex",
      "affinity",
      "auth-url",
      "canary-weight",
      "mirror-target",
    ])
      expect(NGINX_ANNOTATIONS[name]?.note.length ?? 0).toBeGreaterThan(10);
    // The 149 entries never shrink (an annotation flips between kinds, it does not leave); the snippets
    // are the refused ones (next test).
    expect(Object.keys(NGINX_ANNOTATIONS).length).toBe(149);
    expect(Object.values(NGINX_ANNOTATIONS).filter((e) => e.support === "refused").length).toBe(5);
  });

  test("every snippet is refused: configuration text never becomes code", () => {
    const snippets = Object.keys(NGINX_ANNOTATIONS).filter((n) => n.endsWith("-snippet"));
    expect(snippets.length).toBe(5);
    for (const n of snippets) expect(NGINX_ANNOTATIONS[n]?.support).toBe("refused");
  });
});

describe("auditAnnotations", () => {
  test("honoured annotations and other prefixes say nothing", () => {
    expect(
      reasons({ [nginx("ssl-redirect")]: "false", [nginx("limit-rps")]: "5", "example.com/anything": "x" }),
    ).toEqual([]);
  });

  test("not honoured: a warning naming the annotation and what differs from ingress-nginx", () => {
    const [p] = audit({ [nginx("fastcgi-index")]: "index.php" }).problems;
    expect(p).toEqual({
      object: ref,
      reason: "AnnotationNotHonoured",
      severity: "warning",
      message: `annotation ${nginx("fastcgi-index")}: not honoured; FastCGI backends are not supported`,
    });
  });

  test("an nginx tuning knob: an info saying it has no effect here", () => {
    const [p] = audit({ [nginx("proxy-buffer-size")]: "16k" }).problems;
    expect(p?.reason).toBe("AnnotationNoEffect");
    expect(p?.severity).toBe("info");
    expect(p?.message).toStartWith(
      `annotation ${nginx("proxy-buffer-size")}: accepted, with no effect here;`,
    );
  });

  test("refused snippets, unknown keys (a typo) and keys in the wrong case are each reported", () => {
    expect(
      reasons({
        [nginx("configuration-snippet")]: "more_set_headers 'X: y';",
        [nginx("totally-made-up")]: "1",
        "Nginx.Ingress.Kubernetes.io/Rewrite-Target": "/",
      }),
    ).toEqual(["AnnotationKeyCase", "AnnotationRefused", "UnknownAnnotation"]);
  });

  test("a value that asks for nothing is no difference", () => {
    expect(
      reasons({ [nginx("proxy-ssl-ciphers")]: " DEFAULT ", [nginx("load-balance")]: "round_robin" }),
    ).toEqual([]);
    expect(reasons({ [nginx("proxy-ssl-ciphers")]: "HIGH" })).toEqual(["AnnotationNotHonoured"]);
  });

  // whitelist-source-range is enforced, so not listed; spelled in the wrong case it is not read, so it is.
  test("access controls not enforced are listed, including one spelled in the wrong case", () => {
    const a = audit({
      [nginx("whitelist-source-range")]: "10.0.0.0/8",
      [nginx("auth-type")]: "basic",
      "Nginx.ingress.kubernetes.io/auth-type": "basic",
      [nginx("auth-url")]: "http://auth/check",
      [nginx("modsecurity-snippet")]: "SecRuleEngine On",
      "NGINX.ingress.kubernetes.io/denylist-source-range": "1.2.3.4/32",
      [nginx("auth-tls-verify-client")]: "off",
      [nginx("rewrite-target")]: "/",
    });
    expect(a.unenforced).toEqual([
      "NGINX.ingress.kubernetes.io/denylist-source-range",
      // Honoured when spelled right, so only the wrong-case key (which is not read) closes the Ingress.
      "Nginx.ingress.kubernetes.io/auth-type",
      nginx("modsecurity-snippet"),
    ]);
  });

  test("access controls that ask for nothing do not close the Ingress, in any case of key", () => {
    const a = audit({
      [nginx("enable-owasp-core-rules")]: "false",
      [nginx("limit-connections")]: "0",
      [nginx("whitelist-source-range")]: " ",
      "Nginx.Ingress.Kubernetes.io/Enable-ModSecurity": "false",
    });
    expect(a.unenforced).toEqual([]);
    expect(a.problems.map((p) => p.reason)).toEqual(["AnnotationKeyCase"]);
  });

  test("gatehouse.dev/: our own annotation is known, any other key is a typo", () => {
    expect(reasons({ "gatehouse.dev/auth-policy": "jwt", "gatehouse.dev/auth-polcy": "jwt" })).toEqual([
      "UnknownAnnotation",
    ]);
  });

  test("bad input is bounded: empty, huge and binary values, a thousand keys, a huge key", () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 1000; i++) many[nginx(`made-up-${i}`)] = "\u0000\uffff".repeat(i);
    many[nginx("fastcgi-index")] = "x".repeat(1 << 20);
    many[nginx("fastcgi-params-configmap")] = "";
    many[nginx(`k${"y".repeat(5000)}`)] = "1";
    const a = audit(many);
    expect(a.problems).toHaveLength(MAX_ANNOTATION_PROBLEMS + 1);
    expect(a.problems.at(-1)?.message).toBe("983 more annotation problems not listed");
    for (const p of a.problems) expect(p.message.length).toBeLessThan(400);
  });

  test("the audit is kept per Ingress object", () => {
    const ingress = { metadata: { annotations: { [nginx("use-regex")]: "true" } } } as unknown as Ingress;
    expect(auditAnnotations(ingress, ref)).toBe(auditAnnotations(ingress, ref));
  });
});

test("a failing-closed Ingress answers 403 with a problem+json body that says why", () => {
  const action = failClosedAction(ref, [nginx("auth-url")]);
  expect(action).toMatchObject({
    kind: "DirectResponse",
    status: 403,
    contentType: "application/problem+json",
  });
  const body = JSON.parse((action as { body: string }).body);
  expect(body).toEqual({
    type: "about:blank",
    title: "Forbidden",
    status: 403,
    detail: `Ingress shop/web asks for access controls this gateway does not enforce: ${nginx("auth-url")}`,
  });
});
