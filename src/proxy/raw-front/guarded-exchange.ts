/**
 * A request on a guarded fast route while its guards are still deciding (a token not yet verified, a
 * limiter round trip). Whatever the connection hands over meanwhile is kept: body bytes are copied (the
 * connection's buffer is reused), and reading stops once more than HOLD_LIMIT bytes wait, so a client
 * cannot make us buffer a large body for a request that may be refused. Then either the refusal is
 * written (the connection closes when part of the body was never read, as for any early answer) or the
 * FastExchange starts with the guards' edits and takes over everything held and everything after.
 * On a route with a WAF, an admitted request then waits for its body (up to the WAF's inspection limit,
 * reading paused past it) and goes through the engine first (waf-inspection.ts; the engine answers from
 * its worker): its refusal is written the same way, and only a request it passes starts the
 * FastExchange. A client gone meanwhile (abort) gets neither; the connection serves its next pipelined
 * request only once this one's answer is written, so the order holds.
 */

import { type CompiledWaf, wafFailure } from "../../waf/compiled.ts";
import { wafResponse } from "../../waf/decide.ts";
import type { RequestInfo } from "../request/observer.ts";
import type { RequestTarget } from "../request/request-target.ts";
import type { BackendChoice, ChoiceLease, CompiledRoute } from "../table.ts";
import type { ClientSide, Exchange } from "./client-side.ts";
import type { GuardPass, GuardResult } from "./edge-guards.ts";
import { FastExchange } from "./fast-exchange.ts";
import { httpDate, reasonPhrase, serialiseHeaders } from "./http1/head-to-client.ts";
import { BODY_LENGTH, type RequestHead } from "./http1/request-head.ts";
import { inspectHeld } from "./waf-inspection.ts";

/** Body bytes held before reading pauses (reason 1: the body's destination cannot take more). */
const HOLD_LIMIT = 64 * 1024;

export class GuardedExchange implements Exchange {
  private inner: Exchange | undefined;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private ended = false;
  /** Guards settled (or the exchange was aborted): nothing more is held. */
  private done = false;
  private aborted = false;
  /** The refusal went to the client. */
  private answered = false;
  /** Admitted by the guards, waiting for the body the route's WAF inspects. */
  private admitted: GuardPass | undefined;
  /** Reading is paused for what is held (the connection's pause reason 1). */
  private paused = false;

  constructor(
    private readonly conn: ClientSide,
    private readonly head: RequestHead,
    private readonly target: RequestTarget,
    private readonly route: CompiledRoute,
    private readonly choice: BackendChoice,
    private readonly info: RequestInfo | undefined,
    result: GuardResult | Promise<GuardResult>,
    /** The route's balancing for this request (balancing/); absent: round robin. */
    private readonly lease?: ChoiceLease,
  ) {
    Promise.resolve(result)
      .then((r) => this.settle(r))
      .catch(() => {
        // Only a bug gets here (the guards return a refusal rather than throw): never forward, never hang.
        if (!this.aborted && !this.answered && this.inner === undefined) this.conn.fail(500);
      });
  }

  body(buf: Buffer, start: number, end: number): void {
    if (this.inner !== undefined) {
      this.inner.body(buf, start, end);
      return;
    }
    if (this.done || end === start) return;
    this.held.push(Buffer.from(buf.subarray(start, end)));
    this.heldBytes += end - start;
    if (this.admitted !== undefined) this.inspectWhenHeld();
    else if (this.heldBytes > HOLD_LIMIT) this.pause();
  }

  bodyEnd(): void {
    this.ended = true;
    if (this.admitted !== undefined) this.inspectWhenHeld();
    else this.inner?.bodyEnd();
  }

  clientDrained(): void {
    this.inner?.clientDrained();
  }

  drain(): void {
    this.inner?.drain?.();
  }

  abort(): void {
    this.done = true;
    this.aborted = true;
    this.admitted = undefined;
    this.held = [];
    this.inner?.abort();
    this.inner = undefined;
  }

  private async settle(r: GuardResult): Promise<void> {
    if (this.done) return;
    if (!r.ok) {
      await this.refuse(r.response);
      return;
    }
    if (this.route.waf !== undefined) {
      this.admitted = r;
      // The WAF is the last guard: the client is asked for the body now (Expect: 100-continue), unless
      // its declared length is refused already.
      const waf = this.route.waf;
      if (!declaredTooLarge(waf, this.head) && wafFailure(waf) === undefined) this.conn.bodyWanted();
      this.inspectWhenHeld();
      return;
    }
    this.start(r);
  }

  /** The body ended or passed the WAF's limit: the engine decides; else keep reading. */
  private inspectWhenHeld(): void {
    const waf = this.route.waf;
    const pass = this.admitted;
    if (waf === undefined || pass === undefined) return;
    const limit = waf.settings.requestBodyLimitBytes;
    const tooLarge = declaredTooLarge(waf, this.head);
    // A WAF that cannot run answers 503 at once, before any of the body is read.
    if (!this.ended && this.heldBytes <= limit && !tooLarge && wafFailure(waf) === undefined) {
      if (this.paused) this.resume();
      return;
    }
    this.admitted = undefined;
    // Nothing more is read until the request is refused or forwarded.
    if (!this.ended) this.pause();
    inspectHeld(waf, this.conn, this.head, this.held, this.heldBytes, tooLarge).then(
      (outcome) => {
        // The client went away while the engine decided: abort() has let go of everything.
        if (this.aborted) return;
        if (outcome.pass) this.start(pass);
        else void this.refuse(wafResponse(outcome, this.conn.state0.settings.serverHeader));
      },
      () => {
        // Only a bug gets here (a refusal is an outcome, not a throw): never forward, never hang.
        if (!this.aborted && !this.answered && this.inner === undefined) this.conn.fail(500);
      },
    );
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.conn.pause(1);
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.conn.resume(1);
  }

  private start(r: GuardPass): void {
    this.done = true;
    const inner = startFast(
      this.conn,
      this.head,
      this.target,
      this.route,
      this.choice,
      this.info,
      r,
      this.lease,
    );
    this.inner = inner;
    const held = this.held;
    this.held = [];
    // The FastExchange takes the body only once its upstream connection is acquired (it is, on start).
    for (const b of held) inner.body(b, 0, b.length);
    if (this.ended) inner.bodyEnd();
    // After what was held: bytes read from now on follow it.
    this.resume();
  }

  /** Writes a guard's answer, as generatedResponse frames ours. */
  private async refuse(res: Response): Promise<void> {
    if (this.done) return;
    this.done = true;
    const body = Buffer.from(await res.arrayBuffer());
    this.held = [];
    // The connection closes when the body was not read whole (below): reading need not wait for it.
    this.resume();
    // The client may have gone while the body was read.
    if (this.aborted) return;
    const close = !this.head.keepAlive || !this.ended;
    const h = res.headers;
    if (!h.has("server")) h.set("server", this.conn.state0.settings.serverHeader);
    if (!h.has("date")) h.set("date", httpDate());
    h.set("content-length", String(body.length));
    h.delete("transfer-encoding");
    if (close) h.set("connection", "close");
    else h.delete("connection");
    const status = res.status;
    const text = `HTTP/1.1 ${status} ${res.statusText || reasonPhrase(status)}\r\n${serialiseHeaders(h)}\r\n`;
    const headOnly = this.head.method === "HEAD";
    this.answered = true;
    this.conn.write(
      headOnly ? Buffer.from(text, "latin1") : Buffer.concat([Buffer.from(text, "latin1"), body]),
    );
    const info = this.info;
    if (info !== undefined) {
      info.client = this.conn.clientIp;
      this.conn.state0.settings.observer?.endRaw?.(info, {
        method: this.head.method,
        host: this.head.host ?? "",
        path: this.target.path,
        requestId: "",
        status,
        bytes: headOnly ? 0 : body.length,
        head: this.head,
      });
    }
    this.conn.responseDone(close);
  }
}

/** A Content-Length past the WAF's limit in `Reject` mode: refused (413) before any of the body is read. */
function declaredTooLarge(waf: CompiledWaf, head: RequestHead): boolean {
  const s = waf.settings;
  return (
    s.requestBodyOverLimit === "Reject" &&
    head.bodyKind === BODY_LENGTH &&
    head.contentLength > s.requestBodyLimitBytes
  );
}

/** The FastExchange of an admitted request, with the guards' edits as its first request and last response filters. */
export function startFast(
  conn: ClientSide,
  head: RequestHead,
  target: RequestTarget,
  route: CompiledRoute,
  choice: BackendChoice,
  info: RequestInfo | undefined,
  pass: GuardPass,
  lease?: ChoiceLease,
): FastExchange {
  return new FastExchange(
    conn,
    head,
    // Authentication may have taken an API key out of the query (the request line is built from this).
    pass.query === undefined ? target : { path: target.path, query: pass.query },
    route,
    choice,
    info,
    lease,
    pass.request,
    pass.response,
    pass.requestEdit,
  );
}
