/**
 * Idle keep-alive connections for the memory section: open `count` HTTP/1.1 connections to a target,
 * each sends one request and reads its answer, then all stay open and idle; the target's RSS (process
 * and children, /proc) before and after, divided by `count`, is what one idle connection costs it.
 * The count is bounded by this process's open-file limit (each connection is a descriptor here too).
 */
import { readFileSync } from "node:fs";
import type { Socket } from "bun";
import { rssKb } from "./procs.ts";

export interface IdleConnections {
  /** Connections held open (fewer than asked when the descriptor limit is lower). */
  readonly count: number;
  readonly rssBeforeKb: number;
  readonly rssAfterKb: number;
  /** (after − before) / count, in bytes. */
  readonly bytesEach: number;
  /** Set when the open-file limit capped the count. */
  readonly limitedBy?: string;
  /** Connections the server closed before the second RSS reading (0 for a valid figure). */
  readonly closedEarly: number;
}

/** This process's soft limit on open files, from /proc (Bun has no getrlimit). */
export function openFileLimit(): number {
  const limits = readFileSync("/proc/self/limits", "utf8");
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(limits);
  return m === null || m[1] === "unlimited" ? Number.POSITIVE_INFINITY : Number(m[1]);
}

/**
 * One connection that has had its answer; rejects on a non-200 answer, a close or after 10 s.
 * `closedIdle` is called if it closes once answered.
 */
export async function openIdle(
  port: number,
  request: string,
  closedIdle: () => void = () => {},
): Promise<Socket<undefined>> {
  const { promise, resolve, reject } = Promise.withResolvers<Socket<undefined>>();
  let got = "";
  let answered = false;
  const timer = setTimeout(() => reject(new Error("no answer within 10 s")), 10_000);
  const settle = (err?: Error, s?: Socket<undefined>) => {
    clearTimeout(timer);
    if (err) reject(err);
    else resolve(s as Socket<undefined>);
  };
  await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      open: (s) => {
        s.write(request);
      },
      data: (s, chunk) => {
        if (answered) return;
        got += chunk.toString("latin1");
        const end = got.indexOf("\r\n\r\n");
        if (end < 0) return;
        if (!got.startsWith("HTTP/1.1 200")) return settle(new Error(`answer: ${got.split("\r\n")[0]}`));
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(got.slice(0, end));
        if (length !== null && got.length - end - 4 < Number(length[1])) return;
        answered = true;
        settle(undefined, s);
      },
      close: () => {
        if (answered) closedIdle();
        else settle(new Error("closed by the server"));
      },
      error: (_s, err) => settle(err),
    },
  }).catch((err: Error) => settle(err));
  return promise;
}

/**
 * Open `wanted` idle keep-alive connections to `port` (`host`/`path`: a route that answers 200), measure
 * the RSS of `pid` (after `settle` ms) before and after, then close them all.
 */
export async function measureIdleConnections(opts: {
  readonly pid: number;
  readonly port: number;
  readonly host: string;
  readonly path: string;
  readonly wanted: number;
  readonly settle: number;
}): Promise<IdleConnections> {
  // Descriptors this process needs besides the connections: wrk, pipes, files; 512 is plenty.
  const fdLimit = openFileLimit() - 512;
  const count = Math.max(1, Math.min(opts.wanted, fdLimit));
  const request = `GET ${opts.path} HTTP/1.1\r\nHost: ${opts.host}\r\nUser-Agent: gatehouse-bench\r\n\r\n`;
  await Bun.sleep(opts.settle);
  const rssBeforeKb = await rssKb(opts.pid);
  const sockets: Socket<undefined>[] = [];
  let closedEarly = 0;
  let measuring = true;
  const closed = () => {
    if (measuring) closedEarly++;
  };
  try {
    // In batches, so the listen backlog never overflows (a dropped SYN costs a 1-s retransmit).
    const batch = 200;
    for (let i = 0; i < count; i += batch) {
      const n = Math.min(batch, count - i);
      sockets.push(
        ...(await Promise.all(Array.from({ length: n }, () => openIdle(opts.port, request, closed)))),
      );
    }
    await Bun.sleep(opts.settle);
    const rssAfterKb = await rssKb(opts.pid);
    measuring = false;
    return {
      count,
      rssBeforeKb,
      rssAfterKb,
      bytesEach: ((rssAfterKb - rssBeforeKb) * 1024) / count,
      closedEarly,
      ...(count < opts.wanted ? { limitedBy: `open-file limit ${fdLimit + 512} of this process` } : {}),
    };
  } finally {
    for (const s of sockets) s.end();
  }
}
