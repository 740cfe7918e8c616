import { describe, expect, test } from "bun:test";
import { lineFormatOf } from "./access-log.ts";
import { ACCESS_LOG_FIELD_NAMES, jsonLineFormat, parseAccessLogFields } from "./json-fields.ts";
import type { AccessRecord } from "./record.ts";

const record: AccessRecord = {
  requestId: "r1",
  client: "10.0.0.7",
  method: "POST",
  host: "a.test",
  path: "/x",
  status: 201,
  bytes: -1,
  durationMs: 1.23456,
  upstream: "127.0.0.1:9000",
  upstreamMs: 0.5,
  route: "r",
  traceId: "",
  backend: "ns/app:80",
  upstreamStatus: 201,
  request: {
    target: "/x?y",
    protocol: "HTTP/1.0",
    length: 99,
    header: (n) => (n === "user-agent" ? "ua/1" : null),
  },
};

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5, 6);

describe("--access-log-fields", () => {
  test("unset: the line every release wrote, field for field and in that order", () => {
    const line = jsonLineFormat().line(record, NOW);
    expect(line.endsWith("\n")).toBe(true);
    expect(Object.keys(JSON.parse(line))).toEqual([
      "time",
      "level",
      "msg",
      "request_id",
      "client",
      "method",
      "host",
      "path",
      "status",
      "bytes",
      "duration_ms",
      "upstream",
      "upstream_ms",
      "route",
      "trace_id",
    ]);
    expect(JSON.parse(line)).toMatchObject({
      time: "2026-01-02T03:04:05.006Z",
      duration_ms: 1.235,
      bytes: -1,
    });
    expect(jsonLineFormat().request).toBeUndefined();
  });

  test("the fields named, in their order, after level and msg; request fields declared", () => {
    const names = parseAccessLogFields(
      " status, protocol,user_agent ,referer,request_length,upstream_status,backend",
    );
    if ("error" in names) throw new Error(names.error);
    const format = jsonLineFormat(names);
    expect(format.request).toEqual({ fields: ["user-agent", "referer"], length: true });
    expect(format.line(record, NOW)).toBe(
      '{"level":"info","msg":"access","status":201,"protocol":"HTTP/1.0","user_agent":"ua/1","referer":"",' +
        '"request_length":99,"upstream_status":201,"backend":"ns/app:80"}\n',
    );
  });

  test("an unknown name is refused with the known ones; so is a repeated name or none", () => {
    expect(parseAccessLogFields("status,latency")).toEqual({
      error: `unknown field "latency" (known: ${ACCESS_LOG_FIELD_NAMES.join(", ")})`,
    });
    expect(ACCESS_LOG_FIELD_NAMES).toContain("trace_id");
    expect(parseAccessLogFields("status,status")).toEqual({ error: 'field "status" is named twice' });
    expect(parseAccessLogFields(" , ")).toEqual({ error: "names no field" });
    expect(parseAccessLogFields("__proto__")).toHaveProperty("error");
  });
});

describe("lineFormatOf (the flags together)", () => {
  test("JSON or text, not both; --access-log-escape only with a template; errors name the flag", () => {
    const error = (o: Parameters<typeof lineFormatOf>[0]) => {
      const f = lineFormatOf(o);
      return "error" in f ? f.error : undefined;
    };
    expect(error({ fields: "status", template: "$status" })).toBe(
      "--access-log-fields and --access-log-format exclude each other (JSON or text lines)",
    );
    expect(error({ escape: "json" })).toBe("--access-log-escape: applies to --access-log-format only");
    expect(error({ template: "$nope" })).toStartWith("--access-log-format: unknown variable $nope");
    expect(error({ fields: "nope" })).toStartWith('--access-log-fields: unknown field "nope"');
    const json = lineFormatOf({ template: '{"s":$status,"ua":"$http_user_agent"}', escape: "json" });
    if ("error" in json) throw new Error(json.error);
    expect(json.line(record, NOW)).toBe('{"s":201,"ua":"ua/1"}\n');
    const plain = lineFormatOf({});
    if ("error" in plain) throw new Error(plain.error);
    expect(plain.line(record, NOW)).toBe(jsonLineFormat().line(record, NOW));
  });
});
