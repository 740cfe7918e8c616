/**
 * The route's WAF on the raw front (src/waf/): the engine is shown the parsed head as the client sent it
 * (request line, every field) and the first `requestBodyLimitBytes` of the decoded body, which
 * GuardedExchange holds until the body ends or passes that limit. The same decision as the full path
 * (waf/request-check.ts), so both fronts answer alike; the engine runs on its worker (waf/engine-queue.ts),
 * and everything it is shown is copied before this returns, so what is held may change meanwhile.
 */
import { randomUUID } from "node:crypto";
import { type CompiledWaf, wafFailure } from "../../waf/compiled.ts";
import { decideWaf, tooLarge, unavailable, type WafOutcome } from "../../waf/decide.ts";
import type { ClientSide } from "./client-side.ts";
import type { RequestHead } from "./http1/request-head.ts";

/** The fields of a head, as the engine takes them (names as sent). */
function* fieldsOf(head: RequestHead): Generator<readonly [string, string]> {
  for (let i = 0; i < head.fieldCount; i++) yield [head.rawName(i), head.value(i)];
}

function fieldValue(head: RequestHead, lower: string): string | undefined {
  for (let i = 0; i < head.fieldCount; i++) if (head.nameIs(i, lower)) return head.value(i);
  return undefined;
}

/**
 * The decision for a request whose held body is `held` (`heldBytes` in all). More than the limit held,
 * or `declaredTooLarge` (its Content-Length is): 413 in `Reject` mode, else the first bytes are inspected.
 */
export function inspectHeld(
  waf: CompiledWaf,
  conn: ClientSide,
  head: RequestHead,
  held: readonly Buffer[],
  heldBytes: number,
  declaredTooLarge: boolean,
): Promise<WafOutcome> {
  if (wafFailure(waf) !== undefined) return Promise.resolve(unavailable(waf));
  const limit = waf.settings.requestBodyLimitBytes;
  const over = heldBytes > limit || declaredTooLarge;
  if (over && waf.settings.requestBodyOverLimit === "Reject") return Promise.resolve(tooLarge(waf));
  const all = held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held as Buffer[], heldBytes);
  const table = conn.state0.table;
  const idHeader = waf.settings.transactionIdHeader;
  return decideWaf(waf, {
    clientAddress: conn.clientIp,
    clientPort: conn.socket.remotePort,
    serverAddress: table.address === "" ? "0.0.0.0" : table.address,
    serverPort: table.port || conn.state0.boundPort,
    method: head.method,
    target: head.target,
    httpVersion: head.http10 ? "1.0" : "1.1",
    headers: fieldsOf(head),
    ...(heldBytes > 0 ? { body: heldBytes > limit ? all.subarray(0, limit) : all } : {}),
    transactionId: (idHeader === undefined ? undefined : fieldValue(head, idHeader)) ?? randomUUID(),
  });
}
