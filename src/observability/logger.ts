/**
 * Application logs as JSON lines on stderr: `{"time":…,"level":"info","msg":…, …fields}`.
 * One shape for every component so operators can search them; access logs use the same shape.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines all carry `fields` (e.g. `{ component: "file-source" }`). */
  child(fields: Record<string, unknown>): Logger;
}

/** Where lines go; tests swap it to capture output. */
export type LogSink = (line: string) => void;

let minLevel: LogLevel =
  (process.env.GATEHOUSE_LOG_LEVEL as LogLevel) in order
    ? (process.env.GATEHOUSE_LOG_LEVEL as LogLevel)
    : "info";
let sink: LogSink = (line) => process.stderr.write(`${line}\n`);

/** Change the minimum level for every logger. */
export function setLogLevel(level: LogLevel): void {
  minLevel = level;
}

/** Redirect every logger's output; returns the previous sink so a test can restore it. */
export function setLogSink(next: LogSink): LogSink {
  const prev = sink;
  sink = next;
  return prev;
}

function write(
  level: LogLevel,
  base: Record<string, unknown>,
  msg: string,
  fields?: Record<string, unknown>,
) {
  if (order[level] < order[minLevel]) return;
  const record: Record<string, unknown> = { time: new Date().toISOString(), level, msg, ...base, ...fields };
  for (const [k, v] of Object.entries(record)) if (v instanceof Error) record[k] = v.message;
  sink(JSON.stringify(record));
}

export function createLogger(base: Record<string, unknown> = {}): Logger {
  return {
    debug: (msg, fields) => write("debug", base, msg, fields),
    info: (msg, fields) => write("info", base, msg, fields),
    warn: (msg, fields) => write("warn", base, msg, fields),
    error: (msg, fields) => write("error", base, msg, fields),
    child: (fields) => createLogger({ ...base, ...fields }),
  };
}

/** The process-wide root logger. */
export const logger: Logger = createLogger();
