/**
 * A `gatehouse serve` process started the way users start it (`bun src/main.ts serve …`, or a compiled
 * executable), for tests of what only a real process shows: signals, exit codes, workers.
 */
import { join, resolve } from "node:path";
import { freePort } from "./ports.ts";

export interface GatewayProcess {
  readonly proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  readonly httpPort: number;
  readonly adminPort: number;
  /** Everything the process printed on stdout and stderr so far. */
  output(): string;
  /** SIGKILL if still running (cleanup after a failed test). */
  kill(): Promise<void>;
}

const main = join(resolve(import.meta.dir, "../.."), "src/main.ts");

/** `bun src/main.ts`: the program as users run it from source. */
export const sourceCommand: readonly string[] = [process.execPath, main];

/**
 * Start `gatehouse serve --dir dir …extra` on free ports and wait until /readyz answers 200. `source` is
 * the folder, or the source flags themselves (`["--kube", "--kubeconfig", FILE]`); `command` what runs
 * `gatehouse` (default: from source).
 */
export async function startGatewayProcess(
  source: string | readonly string[],
  extra: readonly string[] = [],
  command: readonly string[] = sourceCommand,
): Promise<GatewayProcess> {
  const httpPort = await freePort();
  const adminPort = await freePort();
  const proc = Bun.spawn(
    [
      ...command,
      "serve",
      ...(typeof source === "string" ? ["--dir", source] : source),
      "--bind",
      "127.0.0.1",
      "--http-port",
      String(httpPort),
      "--admin-port",
      String(adminPort),
      ...extra,
    ],
    { stdin: "ignore", stdout: "pipe", stderr: "pipe" },
  );
  let out = "";
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) out += decoder.decode(chunk, { stream: true });
  };
  void drain(proc.stdout);
  void drain(proc.stderr);
  const gp: GatewayProcess = {
    proc,
    httpPort,
    adminPort,
    output: () => out,
    kill: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await proc.exited;
    },
  };
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`gatehouse exited with ${proc.exitCode}:\n${out}`);
    try {
      if ((await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status === 200) return gp;
    } catch {
      // not listening yet
    }
    await Bun.sleep(50);
  }
  await gp.kill();
  throw new Error(`gatehouse did not become ready:\n${out}`);
}
