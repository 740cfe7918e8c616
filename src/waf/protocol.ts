/**
 * What crosses between the serving thread and the engine's worker (engine-queue.ts ↔ engine-thread.ts).
 * A request goes as a few strings and one buffer of its own (every header name and value, then the
 * body), which is transferred rather than copied; a rule set goes by the key the serving thread gave its
 * settings, so its directives cross once, when it is loaded.
 */

/** What the fronts show the engine of a request. */
export interface WafRequest {
  readonly clientAddress: string;
  readonly clientPort: number;
  readonly serverAddress: string;
  readonly serverPort: number;
  readonly method: string;
  /** The request target as the client sent it (path and query, still percent-encoded). */
  readonly target: string;
  /** `1.1`, `2.0`. */
  readonly httpVersion: string;
  /** Header fields as received (names in any case); repeated names as repeated entries. */
  readonly headers: Iterable<readonly [string, string]>;
  /** The first bytes of the body (at most the rule set's limit); absent or empty: none. */
  readonly body?: Uint8Array;
  /** Names the transaction in the engine's messages. */
  readonly transactionId: string;
}

/** A request as the worker receives it. */
export interface EngineRequest {
  readonly clientAddress: string;
  readonly clientPort: number;
  readonly serverAddress: string;
  readonly serverPort: number;
  readonly method: string;
  readonly target: string;
  readonly httpVersion: string;
  readonly transactionId: string;
  /** Each field's name length then value length, in `bytes`' order. */
  readonly fieldLengths: readonly number[];
  /** Every field's name and value (latin1) one after another, then the body. */
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly bodyLength: number;
}

/** The engine's answer: `pass`, or the intervention it asked for. */
export interface WafVerdict {
  readonly disruptive: boolean;
  /** The status the intervention asks for (403 by default for `deny`); 200 when it passes. */
  readonly status: number;
  /** Set for a `redirect` intervention. */
  readonly url?: string;
  /** The engine's message for the intervention: the rule's id and msg among others. */
  readonly log?: string;
  /** Ids of the rules that matched (anomaly-scoring ones included), at most 32. */
  readonly rules: readonly string[];
}

/** The rule id and message of an engine log line (`[id "949110"] [msg "…"]`), for a short log field. */
export function ruleOf(log: string | undefined): { id?: string; msg?: string } {
  if (log === undefined) return {};
  const id = /\[id "(\d+)"\]/.exec(log)?.[1];
  const msg = /\[msg "([^"]*)"\]/.exec(log)?.[1];
  return { ...(id !== undefined ? { id } : {}), ...(msg !== undefined ? { msg } : {}) };
}

/** Serving thread → worker, handled one at a time in the order sent. */
export type ToEngine =
  | { readonly t: "init"; readonly library: string }
  | { readonly t: "load"; readonly key: number; readonly directives: string }
  | { readonly t: "release"; readonly key: number }
  | { readonly t: "inspect"; readonly id: number; readonly key: number; readonly req: EngineRequest }
  /** Gateway shutdown: free every rule set, then end the thread. */
  | { readonly t: "exit" }
  /** Tests: keep the worker busy for `ms` (a queue slot held), or make it die as a crash would. */
  | { readonly t: "hold"; readonly id: number; readonly ms: number }
  | { readonly t: "crash" };

/** Worker → serving thread. */
export type FromEngine =
  | { readonly t: "loaded"; readonly key: number; readonly rules: number }
  | { readonly t: "load-failed"; readonly key: number; readonly error: string }
  | { readonly t: "verdict"; readonly id: number; readonly verdict: WafVerdict }
  | { readonly t: "failed"; readonly id: number; readonly error: string }
  | { readonly t: "held"; readonly id: number };

/**
 * The request packed for the worker. `bytes` is a buffer of its own (never a slice of Buffer's shared
 * pool), so it can be transferred; everything is copied here, synchronously, so the caller may reuse
 * what it passed (the raw front's held chunks, a parsed head) as soon as this returns.
 */
export function packRequest(req: WafRequest): EngineRequest {
  const parts: string[] = [];
  const fieldLengths: number[] = [];
  for (const [name, value] of req.headers) {
    parts.push(name, value);
    fieldLengths.push(name.length, value.length);
  }
  const fields = parts.join("");
  const body = req.body;
  const bodyLength = body?.byteLength ?? 0;
  const bytes = new Uint8Array(fields.length + bodyLength);
  Buffer.from(bytes.buffer, 0, fields.length).write(fields, 0, "latin1");
  if (body !== undefined && bodyLength > 0) bytes.set(body, fields.length);
  return {
    clientAddress: req.clientAddress,
    clientPort: req.clientPort,
    serverAddress: req.serverAddress,
    serverPort: req.serverPort,
    method: req.method,
    target: req.target,
    httpVersion: req.httpVersion,
    transactionId: req.transactionId,
    fieldLengths,
    bytes,
    bodyLength,
  };
}
