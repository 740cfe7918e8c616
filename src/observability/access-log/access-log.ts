/**
 * Access log: one line per request on stdout, sampled by `--access-log-sample` (0 = off, 1 = every
 * request). By default a JSON line in the shape of application logs (`time`, `level`, `msg` then fields),
 * its fields chosen by `--access-log-fields` (json-fields.ts); or a text line in an nginx `log_format`
 * template, `--access-log-format` (template.ts). docs/observability.md has both.
 */
import { jsonLineFormat, parseAccessLogFields } from "./json-fields.ts";
import type { AccessRecord, LineFormat } from "./record.ts";
import { type LogEscape, parseLogTemplate, templateLineFormat } from "./template.ts";

/** The access-log flags: at most one of `fields` and `template`; `escape` only with `template`. */
export interface AccessLogOptions {
  readonly fields?: string | undefined;
  readonly template?: string | undefined;
  readonly escape?: LogEscape | undefined;
}

/** The line format the flags ask for, or why they are refused (the flag named, for the start's error). */
export function lineFormatOf(o: AccessLogOptions): LineFormat | { readonly error: string } {
  if (o.fields !== undefined && o.template !== undefined)
    return { error: "--access-log-fields and --access-log-format exclude each other (JSON or text lines)" };
  if (o.escape !== undefined && o.template === undefined)
    return { error: "--access-log-escape: applies to --access-log-format only" };
  if (o.template !== undefined) {
    const parts = parseLogTemplate(o.template);
    if ("error" in parts) return { error: `--access-log-format: ${parts.error}` };
    return templateLineFormat(parts, o.escape ?? "default");
  }
  if (o.fields === undefined) return jsonLineFormat();
  const names = parseAccessLogFields(o.fields);
  if ("error" in names) return { error: `--access-log-fields: ${names.error}` };
  return jsonLineFormat(names);
}

export type LineSink = (line: string) => void;

export class AccessLog {
  /** @param sample share of requests logged, 0…1 */
  constructor(
    readonly sample: number,
    private readonly sink: LineSink = (line) => process.stdout.write(line),
    readonly format: LineFormat = jsonLineFormat(),
  ) {}

  /**
   * Cheap check for the hot path: build a record only when this returns true. `share`: the route's own
   * (CompiledRoute `logShare`), in place of the flag's; undefined: the flag's.
   */
  wants(share: number = this.sample): boolean {
    return share >= 1 || (share > 0 && Math.random() < share);
  }

  write(r: AccessRecord): void {
    this.sink(this.format.line(r, Date.now()));
  }
}
