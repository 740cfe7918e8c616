import { afterEach, expect, test } from "bun:test";
import type { Socket, TCPSocketListener } from "bun";
import { Outbox } from "./outbox.ts";

let server: TCPSocketListener<{ got: Buffer[] }> | undefined;
const clients: Socket<undefined>[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.terminate();
  server?.stop(true);
  server = undefined;
});

/** A loopback listener whose connections start paused (nothing read until `resume`). */
function listen(): Promise<{ port: number; accepted: Promise<Socket<{ got: Buffer[] }>>[] }> {
  const waiters: ((s: Socket<{ got: Buffer[] }>) => void)[] = [];
  const accepted = [0, 1].map(() => new Promise<Socket<{ got: Buffer[] }>>((r) => waiters.push(r)));
  server = Bun.listen<{ got: Buffer[] }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        s.data = { got: [] };
        s.pause();
        waiters.shift()?.(s);
      },
      data(s, chunk) {
        s.data.got.push(Buffer.from(chunk));
      },
    },
  });
  return Promise.resolve({ port: server.port, accepted });
}

async function connect(port: number, onDrain: () => void): Promise<Socket<undefined>> {
  const s = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {}, drain: onDrain } });
  clients.push(s);
  return s;
}

test("a latin1 head that cannot go out at once is kept intact, whatever the scratch buffer holds next", async () => {
  const { port, accepted } = await listen();
  let out: Outbox | undefined;
  const a = await connect(port, () => out?.flush());
  const b = await connect(port, () => {});
  const peerA = await (accepted[0] as Promise<Socket<{ got: Buffer[] }>>);
  await accepted[1];
  // Fill A's path until the kernel takes no more: the next write must be queued.
  const filler = Buffer.alloc(64 * 1024, 0x2e);
  let filled = 0;
  for (let i = 0; i < 10_000; i++) {
    const n = a.write(filler);
    filled += Math.max(0, n);
    if (n < filler.length) break;
  }
  out = new Outbox(a as Socket<unknown>);
  const head = `GET /caf\u00e9 HTTP/1.1\r\nHost: a\r\nX-Pad: ${"p".repeat(3000)}\r\n\r\n`;
  expect(out.writeLatin1(head)).toBe(false);
  expect(out.backlogged).toBe(true);
  // The scratch buffer is shared: another connection's head overwrites it now.
  const other = new Outbox(b as Socket<unknown>);
  expect(other.writeLatin1("X".repeat(head.length))).toBe(true);
  peerA.resume();
  const want = filled + head.length;
  for (let i = 0; i < 500 && peerA.data.got.reduce((n, c) => n + c.length, 0) < want; i++)
    await Bun.sleep(10);
  const all = Buffer.concat(peerA.data.got);
  expect(all.length).toBe(want);
  expect(all.subarray(filled).toString("latin1")).toBe(head);
  expect(out.backlogged).toBe(false);
});
