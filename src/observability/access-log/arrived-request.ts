/**
 * The request as the client sent it, for access-log formats that name request fields (`$http_*`,
 * `$request_length`, `$server_protocol`, …), read the same way on both fronts: from the raw front's
 * parsed head, which nothing edits, or from a Bun.serve Request before the request path edits its
 * headers (X-Forwarded-*, X-Request-Id, a URLRewrite's Host).
 *
 * `length` is counted from what was parsed, the same on both fronts: the request line
 * (`METHOD SP target SP protocol CRLF`), each field as `name: value CRLF` (whitespace around the value
 * not counted, repeated fields as the front keeps them), the blank line, and a Content-Length body's
 * declared size (a chunked body counts 0: the line is written when the response head is ready).
 */
import { type ArrivedRequest, type RawRequestHead, requestProtocol } from "../../proxy/request/observer.ts";

/** CRLF after the request line and the blank line after the fields. */
const LINE_ENDS = 4;

/** The raw front's head as an ArrivedRequest; values are decoded only when asked. */
export class HeadArrival implements ArrivedRequest {
  constructor(private readonly head: RawRequestHead) {}

  get target(): string {
    return this.head.target;
  }

  get protocol(): string {
    return this.head.http10 ? "HTTP/1.0" : "HTTP/1.1";
  }

  get length(): number {
    const h = this.head;
    let n = h.method.length + 1 + h.target.length + 1 + 8 + LINE_ENDS + h.contentLength;
    for (let i = 0; i < h.fieldCount; i++) n += h.rawName(i).length + 2 + h.value(i).length + 2;
    return n;
  }

  header(lower: string): string | null {
    const h = this.head;
    let v: string | null = null;
    for (let i = 0; i < h.fieldCount; i++)
      if (h.nameIs(i, lower)) v = v === null ? h.value(i) : `${v}, ${h.value(i)}`;
    return v;
  }
}

/**
 * A Bun.serve Request's arrival, copied at `begin`: the target (Request.url is not edited later, but is
 * read here once), the protocol, the length, and the values of the `fields` the format names.
 */
export function requestArrival(req: Request, fields: readonly string[], withLength: boolean): ArrivedRequest {
  const url = req.url;
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  const target = pathStart < 0 ? "/" : url.slice(pathStart);
  const protocol = requestProtocol(req);
  const headers = req.headers;
  let length = 0;
  if (withLength) {
    const declared = Number(headers.get("content-length") ?? 0);
    length = req.method.length + 1 + target.length + 1 + protocol.length + LINE_ENDS;
    length += Number.isSafeInteger(declared) && declared > 0 ? declared : 0;
    headers.forEach((value, name) => {
      length += name.length + 2 + value.length + 2;
    });
  }
  const values = new Map<string, string | null>();
  for (const f of fields) values.set(f, headers.get(f));
  return { target, protocol, length, header: (lower) => values.get(lower) ?? null };
}
