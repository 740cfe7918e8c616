import { describe, expect, test } from "bun:test";
import { AUTH_VARIABLES } from "../../../model/location-template.ts";
import { cacheDurations, externalAuthOf, templateProblem } from "./external-auth.ts";

function read(annotations: Record<string, string>) {
  const reports: { name: string; closed: boolean }[] = [];
  const auth = externalAuthOf({
    raw: (n) => annotations[n],
    bad: (name, _value, _why, closed) => reports.push({ name, closed }),
    notApplied: (names) => {
      for (const name of names) reports.push({ name, closed: false });
    },
  });
  return { auth, reports };
}

describe("ingress-nginx auth-url and friends", () => {
  test("the usual oauth2-proxy set: read as written, names lower-case, defaults filled", () => {
    const { auth, reports } = read({
      "auth-url": "https://$host/oauth2/auth",
      "auth-signin": "https://$host/oauth2/start?rd=$escaped_request_uri",
      "auth-response-headers": "X-Auth-Request-User, x-auth-request-email,X-Auth-Request-User",
    });
    expect(reports).toEqual([]);
    expect(auth).toEqual({
      url: "https://$host/oauth2/auth",
      signinURL: "https://$host/oauth2/start?rd=$escaped_request_uri",
      signinRedirectParam: "rd",
      responseHeaders: ["x-auth-request-user", "x-auth-request-email"],
      alwaysSetCookie: false,
      timeoutMs: 5000,
    });
  });

  test("never open: what ingress-nginx denies the location for closes the routes", () => {
    for (const [name, value] of [
      ["auth-url", "auth.svc/check"],
      ["auth-url", "ftp://auth/check"],
      ["auth-url", "https://$hostname/check"],
      ["auth-url", "https://user:pw@auth/check"],
      ["auth-method", "BREW"],
      ["auth-response-headers", "X-User, Content-Length"],
      ["auth-response-headers", "X User"],
      ["auth-response-headers", "Host"],
    ] as const) {
      const annotations: Record<string, string> = { "auth-url": "http://auth/check", [name]: value };
      expect(read(annotations).reports).toEqual([{ name, closed: true }]);
    }
  });

  test("what ingress-nginx warns about and drops is reported and dropped, opening nothing", () => {
    const { auth, reports } = read({
      "auth-url": "http://auth/check",
      "auth-signin": "/relative",
      "auth-signin-redirect-param": "r d",
      "auth-cache-key": "$nope",
      "auth-always-set-cookie": "yes please",
    });
    expect(reports.map((r) => [r.name, r.closed])).toEqual([
      ["auth-signin", false],
      ["auth-signin-redirect-param", false],
      ["auth-always-set-cookie", false],
      ["auth-cache-key", false],
    ]);
    expect(auth?.signinURL).toBeUndefined();
    expect(auth?.signinRedirectParam).toBe("rd");
    expect(auth?.cache).toBeUndefined();
  });

  test("the others without auth-url: reported, not applied", () => {
    const { auth, reports } = read({ "auth-signin": "https://login/", "auth-method": "GET" });
    expect(auth).toBeUndefined();
    expect(reports).toEqual([
      { name: "auth-method", closed: false },
      { name: "auth-signin", closed: false },
    ]);
  });

  test("cache durations as nginx's proxy_cache_valid reads them", () => {
    expect(cacheDurations("200 202 401 5m")).toEqual({ "200": 300, "202": 300, "401": 300 });
    expect(cacheDurations("200 1h, 401 30s")).toEqual({ "200": 3600, "401": 30 });
    expect(cacheDurations("10m")).toEqual({ "200": 600, "301": 600, "302": 600 });
    for (const bad of ["", "200", "5m 200", "200 5x", "999 5m", "200 100ms"])
      expect(cacheDurations(bad)).toBeUndefined();
  });

  test("templates: variables Gatehouse fills, and an absolute URL around them", () => {
    expect(templateProblem("https://$host/x?u=$escaped_request_uri", AUTH_VARIABLES, true)).toBeUndefined();
    expect(templateProblem(`http://$${"{host}"}:8080/x`, AUTH_VARIABLES, true)).toBeUndefined();
    expect(templateProblem("http://auth/$remote_addr", AUTH_VARIABLES, true)).toContain("$remote_addr");
    expect(templateProblem("$scheme://auth/x", AUTH_VARIABLES, true)).toBeUndefined();
    expect(templateProblem("//auth/x", AUTH_VARIABLES, true)).toBe("not an absolute URL");
  });
});
