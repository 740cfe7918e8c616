/**
 * One request through the engine, whole, in one synchronous call on the engine's worker (engine-thread.ts):
 * connection, request line, headers, the (already bounded) body, the intervention after each phase, and
 * the transaction freed in `finally` whatever happens. Nothing of ModSecurity's outlives the call (its
 * intervention strings are freed too).
 */
import { CString, type Pointer, ptr } from "bun:ffi";
import { asPointer, cText, type RuleSet, type WafEngine } from "./engine.ts";
import type { EngineRequest, WafVerdict } from "./protocol.ts";

/** The C `ModSecurityIntervention`: int status, int pause, char *url, char *log, int disruptive (x86-64/arm64). */
const interventionSize = 32;

export function inspectRequest(engine: WafEngine, set: RuleSet, req: EngineRequest): WafVerdict {
  if (set.freed) throw new Error("rule set already released");
  const msc = engine.msc;
  const tx = asPointer(
    msc.msc_new_transaction_with_id(engine.instance, set.pointer, cText(req.transactionId), null),
  );
  if (tx === null) throw new Error("msc_new_transaction returned NULL");
  const it = new Int32Array(interventionSize / 4);
  engine.matchedRules = [];
  try {
    msc.msc_process_connection(
      tx,
      cText(req.clientAddress),
      req.clientPort,
      cText(req.serverAddress),
      req.serverPort,
    );
    msc.msc_process_uri(tx, cText(req.target), cText(req.method), cText(req.httpVersion));
    let v = intervention(engine, tx, it);
    if (v.disruptive) return v;
    const fieldBytes = addHeaders(engine, tx, req);
    msc.msc_process_request_headers(tx);
    v = intervention(engine, tx, it);
    if (v.disruptive) return v;
    if (req.bodyLength > 0) msc.msc_append_request_body(tx, req.bytes.subarray(fieldBytes), req.bodyLength);
    msc.msc_process_request_body(tx);
    return intervention(engine, tx, it);
  } finally {
    msc.msc_transaction_cleanup(tx);
  }
}

/** Every header from the one buffer, by address and length (no per-header copy); the bytes they took. */
function addHeaders(engine: WafEngine, tx: Pointer, req: EngineRequest): number {
  const lengths = req.fieldLengths;
  if (lengths.length === 0 || req.bytes.byteLength === 0) return 0;
  const base = ptr(req.bytes);
  let at = 0;
  for (let i = 0; i + 1 < lengths.length; i += 2) {
    const nameLength = lengths[i] as number;
    const valueLength = lengths[i + 1] as number;
    engine.msc.msc_add_n_request_header(
      tx,
      (base + at) as Pointer,
      nameLength,
      (base + at + nameLength) as Pointer,
      valueLength,
    );
    at += nameLength + valueLength;
  }
  return at;
}

function intervention(engine: WafEngine, tx: Pointer, it: Int32Array): WafVerdict {
  it.fill(0);
  it[0] = 200;
  engine.msc.msc_intervention(tx, it);
  const view = new BigUint64Array(it.buffer, 0, interventionSize / 8);
  const urlAt = Number(view[1]) as Pointer;
  const logAt = Number(view[2]) as Pointer;
  const url = urlAt === 0 ? undefined : new CString(urlAt).toString();
  const log = logAt === 0 ? undefined : new CString(logAt).toString();
  if (urlAt !== 0) engine.free(urlAt);
  if (logAt !== 0) engine.free(logAt);
  const rules = engine.matchedRules;
  if (it[6] === 0 && url === undefined)
    return { disruptive: false, status: 200, rules, ...(log !== undefined ? { log } : {}) };
  return {
    disruptive: true,
    rules,
    status: it[0] ?? 403,
    ...(url !== undefined ? { url } : {}),
    ...(log !== undefined ? { log } : {}),
  };
}
