/**
 * SIGTERM while keep-alive clients send without pause, on a real process: through the drain delay every
 * request is answered, every response that started arrives whole (no accepted request is reset), and
 * once the listeners stop new connections are refused while a long request still finishes. Run on both
 * fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { defaultBackendYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gateway-process.ts";

let dir: string;
let echo: EchoServer;
const started: GatewayProcess[] = [];

beforeAll(async () => {
  echo = startEchoServer({ service: "app" });
  dir = await mkdtemp(join(tmpdir(), "gatehouse-drain-ka-"));
  await writeFile(join(dir, "all.yaml"), defaultBackendYaml("app", echo.port));
});

afterAll(async () => {
  for (const gw of started) await gw.kill();
  await echo?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** What one keep-alive client saw, request by request (times are `performance.now()`). */
interface ClientLog {
  /** Complete responses: status and when they finished. */
  answered: { status: number; at: number }[];
  /** A response head or body began and the connection closed before it was whole: must never happen. */
  cut: { at: number; got: number }[];
  /** The request was written and the connection closed with no response byte (the keep-alive close
   * race when the server closes an idle connection); when it happened. */
  unanswered: number[];
  /** Connection attempts refused; when. */
  refused: number[];
}

type Outcome =
  | { kind: "answered"; status: number; close: boolean }
  | { kind: "cut"; got: number }
  | { kind: "unanswered" };

/** One request on `socket`, read to the end of its Content-Length body. */
function exchange(socket: Socket, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    const done = (o: Outcome) => {
      socket.off("data", onData);
      socket.off("close", onClose);
      resolve(o);
    };
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buf.subarray(0, end).toString("latin1");
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? Number.NaN);
      if (buf.length - end - 4 < length) return;
      const status = Number(head.slice(9, 12));
      done({ kind: "answered", status, close: /\r\nconnection: *close/i.test(head) });
    };
    const onClose = () => done(buf.length === 0 ? { kind: "unanswered" } : { kind: "cut", got: buf.length });
    socket.on("data", onData);
    socket.on("close", onClose);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: any\r\n\r\n`);
  });
}

function open(port: number): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port }, () => resolve(s));
    s.once("error", () => resolve(undefined));
  });
}

/** Sends requests back to back on one connection, reconnecting when it closes, until `until`. */
async function keepAliveClient(port: number, until: number): Promise<ClientLog> {
  const log: ClientLog = { answered: [], cut: [], unanswered: [], refused: [] };
  let socket: Socket | undefined;
  while (performance.now() < until) {
    if (socket === undefined || socket.destroyed) {
      socket = await open(port);
      if (socket === undefined) {
        log.refused.push(performance.now());
        await Bun.sleep(20);
        continue;
      }
    }
    const o = await exchange(socket, "/k?delay=5ms");
    const at = performance.now();
    if (o.kind === "answered") {
      log.answered.push({ status: o.status, at });
      if (o.close) socket.destroy();
    } else if (o.kind === "cut") log.cut.push({ at, got: o.got });
    else log.unanswered.push(at);
  }
  socket?.destroy();
  return log;
}

forEachFront("drain with keep-alive clients", (front) => {
  test("keep-alive clients through SIGTERM: served during the delay, nothing cut, then refused", async () => {
    const delayMs = 800;
    const gw = await startGatewayProcess(dir, [
      "--workers",
      "1",
      "--drain-delay-ms",
      String(delayMs),
      "--front",
      front,
    ]);
    started.push(gw);
    const port = gw.httpPort;
    const t0 = performance.now();
    const sigtermAt = t0 + 300;
    const until = sigtermAt + delayMs + 600;
    const clients = Array.from({ length: 4 }, () => keepAliveClient(port, until));
    // A long request keeps the process alive after its listeners stop, to show refusals while it runs.
    await Bun.sleep(sigtermAt - performance.now() - 100);
    const long = fetch(`http://127.0.0.1:${port}/long?delay=1500ms`, { headers: { host: "any" } }).then(
      async (r) => ({ status: r.status, body: await r.text() }),
    );
    await Bun.sleep(sigtermAt - performance.now());
    gw.proc.kill("SIGTERM");
    // Listeners stop at sigtermAt + delayMs; well after that, while `long` runs, nothing accepts.
    await Bun.sleep(sigtermAt + delayMs + 300 - performance.now());
    expect(gw.proc.exitCode).toBeNull();
    expect(await open(port)).toBeUndefined();

    const logs = await Promise.all(clients);
    const all = {
      answered: logs.flatMap((l) => l.answered),
      cut: logs.flatMap((l) => l.cut),
      unanswered: logs.flatMap((l) => l.unanswered),
      refused: logs.flatMap((l) => l.refused),
    };
    // Every response that started arrived whole, and all of them were 200.
    expect(all.cut).toEqual([]);
    expect(all.answered.filter((a) => a.status !== 200)).toEqual([]);
    // Served throughout the delay (readiness is false, the listeners still take requests)…
    const inDelay = all.answered.filter((a) => a.at > sigtermAt + 100 && a.at < sigtermAt + delayMs - 100);
    expect(inDelay.length).toBeGreaterThan(20);
    // …with no request dropped before the listeners stop (only the idle-close race at that moment)…
    expect(all.unanswered.filter((at) => at < sigtermAt + delayMs - 50)).toEqual([]);
    // …and the clients' reconnects refused afterwards.
    expect(all.refused.length).toBeGreaterThan(0);
    expect(Math.min(...all.refused)).toBeGreaterThan(sigtermAt + delayMs - 50);

    console.log(front, { ...all, answered: all.answered.length, inDelay: inDelay.length });
    expect(await long).toMatchObject({ status: 200 });
    expect(await gw.proc.exited).toBe(0);
  }, 20_000);
});
