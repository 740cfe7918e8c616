/**
 * The `websocket` case: open `ws://<gateway address>/ws` with the case's Origin, then for each exchange
 * send a text or binary frame and expect the echo. Retried until the deadline like other cases, since the
 * route may not be programmed on the first try.
 */
import type { Dial } from "./gateway-api-client.ts";
import { hostHeader } from "./gateway-api-client.ts";
import type { RequestCase, WebSocketExchange } from "./gateway-api-data.ts";

export async function runWebSocketCase(
  c: RequestCase,
  dial: Dial,
  deadlineMs: number,
  retryMs: number,
): Promise<string> {
  const exchanges = c.expected.exchanges ?? [];
  if (!exchanges.length) return "websocket case without exchanges";
  const path = new URL((c.request.url ?? "ws://x/ws").replace("<gateway-address>", "x")).pathname;
  const url = `ws://${hostHeader(dial, null)}${path}`;
  const end = performance.now() + deadlineMs;
  let last = "";
  do {
    try {
      last = await exchange(url, c.request.origin ?? "", exchanges, dial.timeoutMs);
      if (!last) return "";
    } catch (err) {
      last = (err as Error).message;
    }
    await Bun.sleep(retryMs);
  } while (performance.now() < end);
  return `${last} (websocket to ${url}, retried for ${deadlineMs} ms)`;
}

/** One connection running every exchange in order; "" when all echoed back. */
async function exchange(
  url: string,
  origin: string,
  exchanges: readonly WebSocketExchange[],
  timeoutMs: number,
): Promise<string> {
  // Bun's WebSocket accepts extra handshake headers (non-standard option).
  const ws = new WebSocket(url, { headers: { Origin: origin } } as unknown as string[]);
  ws.binaryType = "arraybuffer";
  const inbox: (string | number[])[] = [];
  let wake: (() => void) | undefined;
  let failure: string | undefined;
  ws.onmessage = (e) => {
    inbox.push(typeof e.data === "string" ? e.data : [...new Uint8Array(e.data as ArrayBuffer)]);
    wake?.();
  };
  ws.onerror = () => {
    failure = "websocket error (upgrade refused or connection failed: WebSocket upgrade not proxied?)";
    wake?.();
  };
  ws.onclose = (e) => {
    failure ??= `websocket closed (${e.code} ${e.reason})`;
    wake?.();
  };
  const waitFor = async (ready: () => boolean) => {
    const end = performance.now() + timeoutMs;
    while (!ready() && !failure && performance.now() < end)
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 50);
      });
  };
  try {
    await waitFor(() => ws.readyState === WebSocket.OPEN);
    if (ws.readyState !== WebSocket.OPEN) return failure ?? "websocket did not open";
    for (const [i, x] of exchanges.entries()) {
      ws.send(x.send.text ?? new Uint8Array(x.send.binary ?? []));
      await waitFor(() => inbox.length > i);
      const got = inbox[i];
      if (got === undefined) return failure ?? `no echo for exchange ${i}`;
      const want = x.receive.text ?? [...(x.receive.binary ?? [])];
      if (JSON.stringify(got) !== JSON.stringify(want))
        return `exchange ${i}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`;
    }
    return "";
  } finally {
    ws.onclose = null;
    ws.close();
  }
}
