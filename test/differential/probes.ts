/**
 * The standing probe table (issue 21): raw request bytes an attacker or a broken client sends, by class.
 * Data only: test/differential/run.ts sends each to every target and compares what each answered and
 * what reached which backend. Routes they aim at (targets.ts): host app.example, `/public` prefix →
 * public, `/admin` exact → admin, anything else on that host 404; any other host the catch-all.
 * Strings are bytes (latin1). Where HTTP/1.1 allows, a probe's last request says `Connection: close`, so
 * a target that reads the bytes as meant closes the connection and the probe waits out no timeout.
 */

export type ProbeClass =
  | "framing"
  | "smuggling"
  | "path-confusion"
  | "method"
  | "header"
  | "host"
  | "backend-fault";

export interface Probe {
  readonly name: string;
  readonly class: ProbeClass;
  readonly bytes: string;
}

const H = "Host: app.example\r\n";
const C = "Connection: close\r\n";
/** `GET <target>` to app.example, closing. */
const get = (target: string, fields = "") => `GET ${target} HTTP/1.1\r\n${H}${fields}${C}\r\n`;
/** A POST to /public/x with `fields` (framing included) and `body` exactly as given. */
const post = (fields: string, body: string) => `POST /public/x HTTP/1.1\r\n${H}${fields}${C}\r\n${body}`;
/** The same, keeping the connection open for what follows. */
const keepAlivePost = (fields: string, body: string) => `POST /public/x HTTP/1.1\r\n${H}${fields}\r\n${body}`;
/** A request for /admin, the thing a smuggled request would be after. */
const ADMIN = `GET /admin HTTP/1.1\r\n${H}${C}\r\n`;
/** A closing request after a smuggling attempt. */
const END = get("/public/end");

const p = (name: string, cls: ProbeClass, bytes: string): Probe => ({ name, class: cls, bytes });

export const PROBES: readonly Probe[] = [
  // --- framing: how long the request is
  p("baseline GET", "framing", get("/public/x")),
  p("Content-Length body", "framing", post("Content-Length: 5\r\n", "hello")),
  p("chunked body", "framing", post("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n")),
  p("two equal Content-Length", "framing", post("Content-Length: 5\r\nContent-Length: 5\r\n", "hello")),
  p("two different Content-Length", "framing", post("Content-Length: 5\r\nContent-Length: 6\r\n", "hello!")),
  p("Content-Length list 5, 5", "framing", post("Content-Length: 5, 5\r\n", "hello")),
  p("Content-Length +5", "framing", post("Content-Length: +5\r\n", "hello")),
  p("Content-Length -1", "framing", post("Content-Length: -1\r\n", "hello")),
  p("Content-Length 0x5", "framing", post("Content-Length: 0x5\r\n", "hello")),
  p("Content-Length 005", "framing", post("Content-Length: 005\r\n", "hello")),
  p("Content-Length 2^64+5", "framing", post("Content-Length: 18446744073709551621\r\n", "hello")),
  p("Content-Length empty", "framing", post("Content-Length:\r\n", "")),
  p("chunk size not hex", "framing", post("Transfer-Encoding: chunked\r\n", "zz\r\nhello\r\n0\r\n\r\n")),
  p(
    "chunk size overflows 64 bits",
    "framing",
    post("Transfer-Encoding: chunked\r\n", "10000000000000005\r\nhello\r\n0\r\n\r\n"),
  ),
  p("chunk size with space", "framing", post("Transfer-Encoding: chunked\r\n", "5 \r\nhello\r\n0\r\n\r\n")),
  p("chunk extension", "framing", post("Transfer-Encoding: chunked\r\n", "5;a=b\r\nhello\r\n0\r\n\r\n")),
  p("chunk lines end in bare LF", "framing", post("Transfer-Encoding: chunked\r\n", "5\nhello\n0\n\n")),
  p(
    "chunk data longer than its size",
    "framing",
    post("Transfer-Encoding: chunked\r\n", "3\r\nhello\r\n0\r\n\r\n"),
  ),
  p(
    "chunked with a trailer",
    "framing",
    post("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n"),
  ),
  p(
    "head lines end in bare LF",
    "framing",
    "GET /public/x HTTP/1.1\nHost: app.example\nConnection: close\n\n",
  ),
  p(
    "bare CR in the head",
    "framing",
    "GET /public/x HTTP/1.1\r\nHost: app.example\rX: y\r\nConnection: close\r\n\r\n",
  ),
  p("HTTP/0.9 request line", "framing", "GET /public/x\r\n"),
  p("HTTP/1.0, no Host", "framing", "GET /public/x HTTP/1.0\r\n\r\n"),
  p(
    "HTTP/1.0 keep-alive, then a second request",
    "framing",
    `GET /public/a HTTP/1.0\r\n${H}Connection: keep-alive\r\n\r\nGET /public/b HTTP/1.0\r\n${H}\r\n`,
  ),
  p(
    "two pipelined requests, different Hosts",
    "framing",
    `GET /public/a HTTP/1.1\r\n${H}\r\nGET /public/b HTTP/1.1\r\nHost: other.example\r\n${C}\r\n`,
  ),
  p("empty line before the request", "framing", `\r\n${get("/public/x")}`),
  p("HTTP/1.2", "framing", `GET /public/x HTTP/1.2\r\n${H}${C}\r\n`),
  p("HTTP/2.0 in an HTTP/1 request line", "framing", `GET /public/x HTTP/2.0\r\n${H}${C}\r\n`),
  p("version in lower case", "framing", `GET /public/x http/1.1\r\n${H}${C}\r\n`),
  p("two spaces after the method", "framing", `GET  /public/x HTTP/1.1\r\n${H}${C}\r\n`),
  p("tab between method and target", "framing", `GET\t/public/x HTTP/1.1\r\n${H}${C}\r\n`),
  p("GET with a body", "framing", `GET /public/x HTTP/1.1\r\n${H}Content-Length: 5\r\n${C}\r\nhello`),
  p("request line of 10 KB", "framing", get(`/public/${"a".repeat(10 * 1024)}`)),
  p("header field of 10 KB", "framing", get("/public/x", `X-Big: ${"a".repeat(10 * 1024)}\r\n`)),

  // --- smuggling: two readings of where the request ends
  // The first request keeps the connection open and a closing /public/end follows, so a target that
  // reads the smuggled /admin as a request and one that reads it as body both end with a close.
  p(
    "CL.TE: Content-Length over the chunks and a /admin after them",
    "smuggling",
    keepAlivePost(
      `Content-Length: ${5 + ADMIN.length}\r\nTransfer-Encoding: chunked\r\n`,
      `0\r\n\r\n${ADMIN}`,
    ) + END,
  ),
  p(
    "TE.CL: a /admin inside the chunk, Content-Length 4",
    "smuggling",
    keepAlivePost(
      "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n",
      `${ADMIN.length.toString(16)}\r\n${ADMIN}\r\n0\r\n\r\n`,
    ) + END,
  ),
  // A Transfer-Encoding alone, written oddly: taken as chunked the body is "hello"; ignored, the request
  // has no body (and the chunks would be the next request); refused is the third reading.
  ...[
    ["Transfer-Encoding : chunked (space before colon)", "Transfer-Encoding : chunked"],
    ["Transfer-Encoding:\\tchunked", "Transfer-Encoding:\tchunked"],
    ["Transfer-Encoding: chunked + trailing space", "Transfer-Encoding: chunked "],
    ["Transfer-Encoding obs-folded", "Transfer-Encoding:\r\n chunked"],
    ["Transfer-Encoding: chunked, identity", "Transfer-Encoding: chunked, identity"],
    ["Transfer-Encoding: identity, chunked", "Transfer-Encoding: identity, chunked"],
    ["Transfer-Encoding: gzip, chunked", "Transfer-Encoding: gzip, chunked"],
    ["Transfer-Encoding: xchunked", "Transfer-Encoding: xchunked"],
    ["Transfer-Encoding: CHUNKED", "Transfer-Encoding: CHUNKED"],
    ['Transfer-Encoding: "chunked"', 'Transfer-Encoding: "chunked"'],
    [
      "Transfer-Encoding twice: chunked, identity",
      "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity",
    ],
    [
      "Transfer-Encoding twice: identity, chunked",
      "Transfer-Encoding: identity\r\nTransfer-Encoding: chunked",
    ],
    ["Transfer-Encoding: chunked + NUL", "Transfer-Encoding: chunked\0"],
    ["Transfer_Encoding: chunked (underscore)", "Transfer_Encoding: chunked"],
  ].map(([name, te]) => p(name as string, "smuggling", post(`${te}\r\n`, "5\r\nhello\r\n0\r\n\r\n"))),
  p(
    "GET whose body is a request for /admin",
    "smuggling",
    `GET /public/x HTTP/1.1\r\n${H}Content-Length: ${ADMIN.length}\r\n\r\n${ADMIN}${END}`,
  ),
  p(
    "chunked on HTTP/1.0",
    "smuggling",
    `POST /public/x HTTP/1.0\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
  ),
  p("Content-Length : 5 (space before colon)", "smuggling", post("Content-Length : 5\r\n", "hello")),
  p("Content-Length obs-folded", "smuggling", post("Content-Length:\r\n 5\r\n", "hello")),
  p("Content_Length: 5 (underscore)", "smuggling", post("Content_Length: 5\r\n", "hello")),

  // --- header: field syntax
  p("space in a field name", "header", get("/public/x", "X Foo: bar\r\n")),
  p("control character in a field name", "header", get("/public/x", "X-F\x01oo: bar\r\n")),
  p("NUL in a field value", "header", get("/public/x", "X-Foo: a\0b\r\n")),
  p("control character in a field value", "header", get("/public/x", "X-Foo: a\x01b\r\n")),
  p("DEL in a field value", "header", get("/public/x", "X-Foo: a\x7fb\r\n")),
  p("obs-text (0xe9) in a field value", "header", get("/public/x", "X-Foo: caf\xe9\r\n")),
  p("line without a colon", "header", get("/public/x", "X-Foo bar\r\n")),
  p("empty field name", "header", get("/public/x", ": bar\r\n")),
  p("obs-fold of an ordinary field", "header", get("/public/x", "X-Foo: a\r\n b\r\n")),
  p("whitespace before the first field", "header", `GET /public/x HTTP/1.1\r\n X-Foo: a\r\n${H}${C}\r\n`),
  p(
    "X_Forwarded_For (underscore) beside the proxy's own",
    "header",
    get("/public/x", "X_Forwarded_For: 6.6.6.6\r\n"),
  ),
  p("Expect: 100-continue", "header", post("Expect: 100-continue\r\nContent-Length: 5\r\n", "hello")),
  p("Expect: 200-ok (unknown)", "header", post("Expect: 200-ok\r\nContent-Length: 5\r\n", "hello")),
  p(
    "Upgrade: h2c",
    "header",
    get("/public/x", "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n").replace(
      C,
      "Connection: Upgrade, HTTP2-Settings, close\r\n",
    ),
  ),
  p(
    "Upgrade: websocket without a key",
    "header",
    get("/public/x", "Upgrade: websocket\r\n").replace(C, "Connection: Upgrade, close\r\n"),
  ),

  // --- host: which virtual host
  p("Host with a port", "host", get("/admin").replace(H, "Host: app.example:8080\r\n")),
  p("Host with a trailing dot", "host", get("/admin").replace(H, "Host: app.example.\r\n")),
  p("Host in upper case", "host", get("/admin").replace(H, "Host: APP.EXAMPLE\r\n")),
  p("no Host on HTTP/1.1", "host", `GET /admin HTTP/1.1\r\n${C}\r\n`),
  p("empty Host", "host", get("/admin").replace(H, "Host:\r\n")),
  p("two equal Host fields", "host", get("/admin", H)),
  p("two Host fields, other second", "host", get("/admin", "Host: other.example\r\n")),
  p("two Host fields, app.example second", "host", get("/admin").replace(H, `Host: other.example\r\n${H}`)),
  p("Host with a path", "host", get("/admin").replace(H, "Host: app.example/x\r\n")),
  p("Host with userinfo", "host", get("/admin").replace(H, "Host: x@app.example\r\n")),
  p("Host with a space inside", "host", get("/admin").replace(H, "Host: app .example\r\n")),
  p("Host an IP address", "host", get("/admin").replace(H, "Host: 127.0.0.1\r\n")),
  p("absolute-form, other authority", "host", get("http://other.example/public/x")),
  p(
    "absolute-form, app.example authority, other Host",
    "host",
    get("http://app.example/public/x").replace(H, "Host: other.example\r\n"),
  ),
  p("absolute-form with userinfo", "host", get("http://user@app.example/public/x")),
  p("absolute-form https scheme", "host", get("https://app.example/public/x")),
  p("absolute-form without a path", "host", get("http://app.example")),

  // --- path-confusion: the path matched must be the path forwarded
  p("dot segments", "path-confusion", get("/public/../admin")),
  p("%2e%2e", "path-confusion", get("/public/%2e%2e/admin")),
  p("%2E%2E upper case", "path-confusion", get("/public/%2E%2E/admin")),
  p(".%2e mixed", "path-confusion", get("/public/.%2e/admin")),
  p("%2f encoded slashes", "path-confusion", get("/public%2F..%2Fadmin")),
  p("%2f inside the prefix", "path-confusion", get("/public%2fx")),
  p("backslashes", "path-confusion", get("/public\\..\\admin")),
  p("double slash", "path-confusion", get("//admin")),
  p("double slash inside the prefix", "path-confusion", get("/public//x")),
  p("fragment", "path-confusion", get("/public/x#frag")),
  p("fragment hiding dot segments", "path-confusion", get("/other/x#/../../public/x")),
  p("fragment hiding %2e%2e", "path-confusion", get("/public/x#/%2e%2e/%2e%2e/admin")),
  p("dot segments above the root", "path-confusion", get("/../admin")),
  p("%00", "path-confusion", get("/public/a%00b")),
  p("bad escape %zz", "path-confusion", get("/public/%zz")),
  p("%61dmin (encoded unreserved)", "path-confusion", get("/%61dmin")),
  p("; parameter", "path-confusion", get("/admin;x=1")),
  p("query holding dot segments", "path-confusion", get("/public/x?a=/../../admin")),
  p("raw byte 0xff in the path", "path-confusion", get("/public/\xff")),
  p("target without a leading slash", "path-confusion", get("public/x")),
  p("/publicity is not under /public", "path-confusion", get("/publicity")),
  p("/admin/ is not /admin", "path-confusion", get("/admin/")),

  // --- method
  p("lower-case method", "method", `get /public/x HTTP/1.1\r\n${H}${C}\r\n`),
  p("TRACE", "method", `TRACE /public/x HTTP/1.1\r\n${H}${C}\r\n`),
  p("CONNECT", "method", `CONNECT app.example:443 HTTP/1.1\r\n${H}${C}\r\n`),
  p("OPTIONS *", "method", `OPTIONS * HTTP/1.1\r\n${H}${C}\r\n`),
  p("OPTIONS on a path", "method", `OPTIONS /public/x HTTP/1.1\r\n${H}${C}\r\n`),
  p("unknown method FOO", "method", `FOO /public/x HTTP/1.1\r\n${H}${C}\r\n`),
  p("DELETE with a body", "method", `DELETE /public/x HTTP/1.1\r\n${H}Content-Length: 5\r\n${C}\r\nhello`),
  p("HTTP/2 preface", "method", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),

  // --- backend-fault: the request is plain, the backend's answer is not (backend.ts FAULTS)
  ...[
    "cl-te",
    "two-cl",
    "bad-status",
    "bare-lf",
    "no-length",
    "short-body",
    "early-hints",
    "unasked-101",
    "nul-header",
    "space-before-colon",
    "big-head",
    "http09-answer",
    "no-answer",
  ].map((kind) => p(`backend answer: ${kind}`, "backend-fault", get(`/public/fault/${kind}`))),
  p(
    "backend answer: extra-bytes, then a pipelined request",
    "backend-fault",
    `GET /public/fault/extra-bytes HTTP/1.1\r\n${H}\r\nGET /public/next HTTP/1.1\r\n${H}${C}\r\n`,
  ),
];
