import { describe, expect, test } from "bun:test";
import type { ArrivedRequest } from "../../proxy/request/observer.ts";
import type { AccessRecord } from "./record.ts";
import {
  escapeDefault,
  escapeJson,
  NAMED_LOG_FORMATS,
  parseLogTemplate,
  templateLineFormat,
} from "./template.ts";

const NGINX_DEFAULT = NAMED_LOG_FORMATS.upstreaminfo as string;

function arrived(target: string, fields: Record<string, string>, length = 321): ArrivedRequest {
  return { target, protocol: "HTTP/1.1", length, header: (n) => fields[n] ?? null };
}

function record(extra: Partial<AccessRecord> = {}): AccessRecord {
  return {
    requestId: "0123abcd",
    client: "10.0.0.7",
    method: "GET",
    host: "App.Test:8080",
    path: "/api/x",
    status: 200,
    bytes: 12,
    durationMs: 3.4567,
    upstream: "127.0.0.1:9000",
    upstreamMs: 2.0004,
    route: "httproute/ns/app/rule/0/match/0",
    traceId: "",
    backend: "ns/app:80",
    upstreamStatus: 200,
    request: arrived("/api/x?a=1&b=2", { "user-agent": "curl/8", authorization: "Basic YWxpY2U6c2VjcmV0" }),
    ...extra,
  };
}

function render(template: string, r: AccessRecord, escaping: "default" | "json" = "default"): string {
  const parts = parseLogTemplate(template);
  if ("error" in parts) throw new Error(parts.error);
  return templateLineFormat(parts, escaping).line(r, Date.UTC(2026, 11, 1, 21, 28, 45, 123));
}

describe("parseLogTemplate", () => {
  test("ingress-nginx's default format renders every variable, missing ones as - and empty ones empty", () => {
    const line = render(NGINX_DEFAULT, record()).replace(/\[[^\]]*\+\d{4}\]|\[[^\]]*-\d{4}\]/, "[TIME]");
    expect(line).toBe(
      '10.0.0.7 - alice [TIME] "GET /api/x?a=1&b=2 HTTP/1.1" 200 12 "-" "curl/8" 321 0.003 ' +
        "[ns/app:80] [] 127.0.0.1:9000 12 0.002 200 0123abcd\n",
    );
  });

  test("named formats: upstreaminfo is that template, combined nginx's", () => {
    expect(render("upstreaminfo", record())).toBe(render(NGINX_DEFAULT, record()));
    expect(render("combined", record())).toEndWith('"GET /api/x?a=1&b=2 HTTP/1.1" 200 12 "-" "curl/8"\n');
  });

  test("a request answered by the gateway: the upstream variables are -", () => {
    const r = record({
      upstream: "",
      upstreamMs: -1,
      upstreamStatus: 0,
      backend: "",
      bytes: -1,
      status: 404,
    });
    expect(
      render("$status $body_bytes_sent $upstream_addr $upstream_response_time $upstream_status", r),
    ).toBe("404 - - - -\n");
    expect(render("[$proxy_upstream_name] $upstream_response_length", r)).toBe("[-] -\n");
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's ${name} variable syntax
  test("${name}, case-insensitive names, request parts and nginx's $host", () => {
    expect(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's ${name} variable syntax
      render("${request_method}x ${URI} $args|$is_args|$query_string $host $server_protocol", record()),
    ).toBe("GETx /api/x a=1&b=2|?|a=1&b=2 app.test HTTP/1.1\n");
    const bare = record({ request: arrived("/p", {}) });
    expect(render("[$args][$is_args] $request_uri $remote_user", bare)).toBe("[][] /p -\n");
  });

  test("http_<field> reads any request field, `_` standing for `-`", () => {
    const r = record({ request: arrived("/", { "x-forwarded-for": "1.2.3.4", host: "h.test:81" }) });
    expect(render("$http_x_forwarded_for $http_host $http_x_absent", r)).toBe("1.2.3.4 h.test:81 -\n");
  });

  test("time variables: the Common Log Format and ISO 8601 in local time, $msec", () => {
    const line = render("$time_local|$time_iso8601|$msec", record());
    expect(line).toMatch(
      /^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}\|1796160525\.123\n$/,
    );
    const d = new Date(Date.UTC(2026, 11, 1, 21, 28, 45));
    expect(line.slice(0, 2)).toBe(String(d.getDate()).padStart(2, "0"));
  });

  test("what it reads of the request is declared, so the observer takes only that", () => {
    const needs = (t: string) => {
      const parts = parseLogTemplate(t);
      if ("error" in parts) throw new Error(parts.error);
      return templateLineFormat(parts, "default").request;
    };
    expect(needs("$status $upstream_addr $time_iso8601")).toBeUndefined();
    expect(needs("$http_referer $remote_user $http_referer")).toEqual({
      fields: ["referer", "authorization"],
      length: false,
    });
    expect(needs("$request_uri")).toEqual({ fields: [], length: false });
    expect(needs("$request_length")).toEqual({ fields: [], length: true });
  });

  test("refused: unknown and unfillable variables by name, a bare $, an open ${, controls, no variable", () => {
    const error = (t: string) => {
      const r = parseLogTemplate(t);
      return "error" in r ? r.error : undefined;
    };
    expect(error("$status $nope")).toStartWith("unknown variable $nope (known: $remote_addr, $remote_user,");
    expect(error("$status $nope")).toContain("$http_<field>");
    expect(error("$bytes_sent")).toStartWith("$bytes_sent is not available:");
    expect(error("$sent_http_content_type")).toContain("response header fields are not kept");
    expect(error("$namespace")).toContain("$proxy_upstream_name");
    expect(error("cost $ 5")).toBe('"$" at 5 starts no variable name');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's ${name} variable syntax
    expect(error("${status")).toBe('"${" at 0 has no closing "}"');
    expect(error("$status\n$uri")).toBe("control character at 7: one request is one line");
    expect(error("just text")).toBe("names no variable");
    expect(error("")).toBe("names no variable");
  });
});

describe("escaping", () => {
  test('escape=default: ", \\, controls and bytes from 0x7f up as \\xHH, as nginx', () => {
    expect(escapeDefault('a"b\\c\nd\te\x7f\xe9')).toBe("a\\x22b\\x5Cc\\x0Ad\\x09e\\x7F\\xE9");
    expect(escapeDefault("plain text: /a?b=c&d")).toBe("plain text: /a?b=c&d");
    // Past 0xff (not from a latin1 head): its UTF-8 bytes, a pair of surrogates as one character.
    expect(escapeDefault("€😀")).toBe("\\xE2\\x82\\xAC\\xF0\\x9F\\x98\\x80");
  });

  test("escape=json: a value is a valid JSON string body whatever it holds", () => {
    const nasty = 'q"\\\n\r\t\b\f\x01\x7f\xe9€';
    expect(escapeJson(nasty)).toBe('q\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u007F\\u00E9\\u20AC');
    expect(JSON.parse(`"${escapeJson(nasty)}"`)).toBe(nasty);
  });

  test("a forged user agent cannot end the line or break out of its quotes", () => {
    const r = record({ request: arrived("/", { "user-agent": 'x" 200 "\r\nfake' }) });
    expect(render('"$http_user_agent" $status', r)).toBe('"x\\x22 200 \\x22\\x0D\\x0Afake" 200\n');
    const json = render('{"ua":"$http_user_agent","ref":"$http_referer","s":$status}', r, "json");
    expect(JSON.parse(json)).toEqual({ ua: 'x" 200 "\r\nfake', ref: "", s: 200 });
  });
});
