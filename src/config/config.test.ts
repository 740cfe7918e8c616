import { describe, expect, test } from "bun:test";
import { ConfigError, envName, parseServeConfig } from "./config.ts";

describe("parseServeConfig", () => {
  test("defaults", () => {
    const c = parseServeConfig(["--dir", "examples"], {});
    expect(c["http-port"]).toBe(8080);
    expect(c["admin-port"]).toBe(9090);
    expect(c.bind).toBe("0.0.0.0");
    expect(c.kube).toBe(false);
  });
  test("request head limits: 64 KiB and 100 fields by default; a count past Bun.serve's 198 is refused", () => {
    const c = parseServeConfig(["--dir", "x"], {});
    expect([c["max-request-header-bytes"], c["max-request-header-count"]]).toEqual([65_536, 100]);
    const set = parseServeConfig(
      ["--dir", "x", "--max-request-header-bytes", "16384", "--max-request-header-count", "198"],
      {},
    );
    expect([set["max-request-header-bytes"], set["max-request-header-count"]]).toEqual([16_384, 198]);
    for (const bad of [
      ["--max-request-header-count", "199"],
      ["--max-request-header-count", "0"],
      ["--max-request-header-bytes", "100"],
    ])
      expect(() => parseServeConfig(["--dir", "x", ...bad], {})).toThrow(bad[0]);
  });
  test("environment fills what flags leave out; flags win", () => {
    const env = { GATEHOUSE_HTTP_PORT: "9000", GATEHOUSE_BIND: "127.0.0.1", GATEHOUSE_DIR: "x" };
    const c = parseServeConfig(["--http-port", "7000"], env);
    expect(c["http-port"]).toBe(7000);
    expect(c.bind).toBe("127.0.0.1");
    expect(c.dir).toBe("x");
  });
  test("bad values fail fast naming the flag", () => {
    expect(() => parseServeConfig(["--dir", "x", "--http-port", "70000"], {})).toThrow(/--http-port/);
    expect(() => parseServeConfig(["--dir", "x", "--nope"], {})).toThrow(ConfigError);
    expect(() => parseServeConfig([], {})).toThrow(/--dir DIR/);
    expect(() => parseServeConfig(["--dir", "x", "--kube"], {})).toThrow(/exclude/);
  });
  test("--trusted-proxies and --proxy-protocol: parsed, bad values refused, PROXY headers need raw and trust", () => {
    const d = parseServeConfig(["--dir", "x"], {});
    expect(d["trusted-proxies"]).toEqual([]);
    expect(d["proxy-protocol"]).toBe("none");
    const c = parseServeConfig(
      ["--dir", "x", "--trusted-proxies", "10.0.0.0/8, fd00::/8,192.0.2.1", "--proxy-protocol", "80,443"],
      {},
    );
    expect(c["trusted-proxies"]).toEqual(["10.0.0.0/8", "fd00::/8", "192.0.2.1"]);
    expect(c["proxy-protocol"]).toEqual([80, 443]);
    expect(() => parseServeConfig(["--dir", "x", "--trusted-proxies", "10.0.0.0/33"], {})).toThrow(
      /--trusted-proxies: "10.0.0.0\/33" is not a CIDR/,
    );
    expect(() => parseServeConfig(["--dir", "x", "--proxy-protocol", "yes"], {})).toThrow(/--proxy-protocol/);
    const behindLb = ["--dir", "x", "--trusted-proxies", "10.0.0.0/8", "--proxy-protocol", "all"];
    expect(parseServeConfig(behindLb, {})["proxy-protocol"]).toBe("all");
    expect(() => parseServeConfig([...behindLb, "--front", "bun"], {})).toThrow(
      /--proxy-protocol needs --front raw: Bun.serve cannot read a PROXY header/,
    );
    expect(() => parseServeConfig(["--dir", "x", "--proxy-protocol", "all"], {})).toThrow(
      /--proxy-protocol needs --proxy-protocol-from \(or --trusted-proxies\)/,
    );
    // The balancer may send PROXY headers without its X-Forwarded-For being believed anywhere.
    const from = parseServeConfig(
      ["--dir", "x", "--proxy-protocol", "443", "--proxy-protocol-from", "10.0.0.0/8,192.0.2.1"],
      {},
    );
    expect(from["proxy-protocol-from"]).toEqual(["10.0.0.0/8", "192.0.2.1"]);
    expect(from["trusted-proxies"]).toEqual([]);
    expect(d["proxy-protocol-from"]).toEqual([]);
    expect(() => parseServeConfig(["--dir", "x", "--proxy-protocol-from", "lb"], {})).toThrow(
      /--proxy-protocol-from: "lb" is not a CIDR/,
    );
  });
  test("--global-auth-*: an absolute http(s) URL template and header names, refused at start otherwise", () => {
    const c = parseServeConfig(
      [
        "--dir",
        "x",
        "--global-auth-url",
        "https://$host/oauth2/auth",
        "--global-auth-response-headers",
        "X-User",
      ],
      {},
    );
    expect([c["global-auth-url"], c["global-auth-response-headers"]]).toEqual([
      "https://$host/oauth2/auth",
      "X-User",
    ]);
    const flag = (name: string, v: string) => () => parseServeConfig(["--dir", "x", `--${name}`, v], {});
    expect(flag("global-auth-url", "auth.svc/check")).toThrow(/--global-auth-url: not an absolute URL/);
    expect(flag("global-auth-signin", "https://$nope/x")).toThrow(/--global-auth-signin: \$nope/);
    expect(flag("global-auth-response-headers", "X-User, Connection")).toThrow(
      /"Connection" cannot be copied/,
    );
  });

  test("--global-allowed-response-headers: a comma-separated list, empty by default; bad names refused", () => {
    expect(parseServeConfig(["--dir", "x"], {})["global-allowed-response-headers"]).toEqual([]);
    const c = parseServeConfig(["--dir", "x", "--global-allowed-response-headers", " X-A, X_B,,"], {});
    expect(c["global-allowed-response-headers"]).toEqual(["X-A", "X_B"]);
    const env = { GATEHOUSE_GLOBAL_ALLOWED_RESPONSE_HEADERS: "X-Env" };
    expect(parseServeConfig(["--dir", "x"], env)["global-allowed-response-headers"]).toEqual(["X-Env"]);
    const flag = (v: string) => () =>
      parseServeConfig(["--dir", "x", "--global-allowed-response-headers", v], {});
    expect(flag("X-A,X B")).toThrow(/--global-allowed-response-headers: "X B" is not a header name/);
    expect(flag("Transfer-Encoding")).toThrow(/frames the message/);
  });
  test("the admin port may not be a traffic port, unless 0 (ephemeral)", () => {
    const admin = /--admin-port: must differ from --http-port and --https-port/;
    expect(() => parseServeConfig(["--dir", "x", "--admin-port", "8080"], {})).toThrow(admin);
    expect(() => parseServeConfig(["--dir", "x", "--admin-port", "8443"], {})).toThrow(admin);
    const env = { GATEHOUSE_HTTP_PORT: "7000", GATEHOUSE_ADMIN_PORT: "7000" };
    expect(() => parseServeConfig(["--dir", "x"], env)).toThrow(ConfigError);
    const zero = ["--http-port", "0", "--https-port", "0", "--admin-port", "0"];
    expect(parseServeConfig(["--dir", "x", ...zero], {})["admin-port"]).toBe(0);
    expect(parseServeConfig(["--dir", "x", "--admin-port", "9091"], {})["admin-port"]).toBe(9091);
  });
  test("--otlp-endpoint: an http(s) URL, /v1/traces when it has no path; a bad one or a lone rate refused", () => {
    const off = parseServeConfig(["--dir", "x"], {});
    expect(off["otlp-endpoint"]).toBeUndefined();
    const base = parseServeConfig(["--dir", "x", "--otlp-endpoint", "http://collector:4318"], {});
    expect(base["otlp-endpoint"]).toBe("http://collector:4318/v1/traces");
    expect(base["trace-sample-rate"]).toBe(0.01);
    const env = {
      GATEHOUSE_OTLP_ENDPOINT: "https://otel.example/custom/path",
      GATEHOUSE_TRACE_SAMPLE_RATE: "1",
    };
    const given = parseServeConfig(["--dir", "x"], env);
    expect(given["otlp-endpoint"]).toBe("https://otel.example/custom/path");
    expect(given["trace-sample-rate"]).toBe(1);
    for (const bad of ["collector:4318", "not a url", "ftp://collector/", "http://", "file:///tmp/x", ""])
      expect(() => parseServeConfig(["--dir", "x", "--otlp-endpoint", bad], {})).toThrow(/--otlp-endpoint/);
    const withUrl = ["--dir", "x", "--otlp-endpoint", "http://c:4318"];
    expect(() => parseServeConfig([...withUrl, "--trace-sample-rate", "1.5"], {})).toThrow(
      /--trace-sample-rate/,
    );
    expect(() => parseServeConfig([...withUrl, "--trace-sample-rate", "-0.1"], {})).toThrow(
      /--trace-sample-rate/,
    );
    expect(() => parseServeConfig(["--dir", "x", "--trace-sample-rate", "0.5"], {})).toThrow(
      /--trace-sample-rate: needs --otlp-endpoint/,
    );
  });
  test("--access-log-fields/-format/-escape: checked at start, also from the environment, one of the first two", () => {
    const c = parseServeConfig(["--dir", "x"], { GATEHOUSE_ACCESS_LOG_FORMAT: "upstreaminfo" });
    expect(c["access-log-format"]).toBe("upstreaminfo");
    const f = parseServeConfig(["--dir", "x", "--access-log-fields", "time,status,user_agent"], {});
    expect(f["access-log-fields"]).toBe("time,status,user_agent");
    expect(() => parseServeConfig(["--dir", "x", "--access-log-fields", "time,latency"], {})).toThrow(
      /--access-log-fields: unknown field "latency" \(known: time, request_id, client,/,
    );
    expect(() =>
      parseServeConfig(["--dir", "x", "--access-log-format", "$remote_addr $bytes_sent"], {}),
    ).toThrow(/--access-log-format: \$bytes_sent is not available/);
    const both = ["--dir", "x", "--access-log-fields", "status", "--access-log-format", "$status"];
    expect(() => parseServeConfig(both, {})).toThrow(/exclude each other/);
    expect(() => parseServeConfig(["--dir", "x", "--access-log-escape", "json"], {})).toThrow(
      /applies to --access-log-format only/,
    );
    expect(() =>
      parseServeConfig(["--dir", "x", "--access-log-format", "$status", "--access-log-escape", "none"], {}),
    ).toThrow(/--access-log-escape/);
  });
  test("env names", () => {
    expect(envName("gateway-address-pool")).toBe("GATEHOUSE_GATEWAY_ADDRESS_POOL");
  });
});
