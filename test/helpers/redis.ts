/**
 * A real `redis-server` for tests: a free loopback port, no persistence (`--save "" --appendonly no`),
 * ready once it answers PING. `stop()` kills it (SIGKILL, like a crash) and `start()` brings it back on
 * the same port, for failure-mode tests; `close()` is the cleanup for afterAll/finally.
 */
import { connect } from "node:net";
import { freePort } from "./ports.ts";

export const redisServerPath = process.env.REDIS_SERVER ?? "/usr/bin/redis-server";

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Send one command (inline protocol) and return the raw reply text. */
  command(...args: string[]): Promise<string>;
  /** Kill the server (SIGKILL) and wait for it to be gone. */
  stop(): Promise<void>;
  /** Start it again on the same port (empty: nothing was persisted). */
  start(): Promise<void>;
  /** Freeze it (SIGSTOP): connections stay open but nothing answers, like a hung server. */
  pause(): void;
  /** Thaw it (SIGCONT). */
  resume(): void;
  close(): Promise<void>;
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  let proc: Bun.Subprocess | undefined;
  const command = (...args: string[]) => redisCommand(port, args);
  const start = async () => {
    proc = Bun.spawn(
      [redisServerPath, "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdin: "ignore", stdout: "ignore", stderr: "ignore" },
    );
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}`);
      try {
        if ((await command("PING")).startsWith("+PONG")) return;
      } catch {
        // not listening yet
      }
      await Bun.sleep(20);
    }
    proc.kill("SIGKILL");
    throw new Error("redis-server did not answer PING");
  };
  const alive = () => proc !== undefined && proc.exitCode === null && proc.signalCode === null;
  const signal = (sig: NodeJS.Signals) => {
    if (alive()) proc?.kill(sig);
  };
  const stop = async () => {
    signal("SIGKILL");
    await proc?.exited;
  };
  await start();
  const pause = () => signal("SIGSTOP");
  const resume = () => signal("SIGCONT");
  const close = async () => {
    resume();
    await stop();
  };
  return { port, url: `redis://127.0.0.1:${port}`, command, stop, start, pause, resume, close };
}

/** One command over a fresh connection (RESP array), the first reply line(s) back as text. */
function redisCommand(port: number, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let out = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("redis command timed out"));
    }, 2_000);
    socket.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on("data", (chunk) => {
      out += chunk.toString("utf8");
      // Enough for the replies tests read: a simple line, or a bulk string once its body arrived.
      const bulk = /^\$(\d+)\r\n/.exec(out);
      if (bulk ? out.length >= bulk[0].length + Number(bulk[1]) + 2 : out.endsWith("\r\n")) {
        clearTimeout(timer);
        socket.end();
        resolve(out);
      }
    });
    const body = args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("");
    socket.write(`*${args.length}\r\n${body}`);
  });
}

/** `INFO commandstats` calls of one command (e.g. `evalsha`), for counting round trips. */
export async function commandCalls(redis: RedisServer, name: string): Promise<number> {
  const info = await redis.command("INFO", "commandstats");
  const m = new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info);
  return m ? Number(m[1]) : 0;
}
