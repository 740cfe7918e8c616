/**
 * `gatehouse convert -f FILE... | --kube [--gateway NS/NAME] [--portable] [--strict] [translate's flags]`: Ingresses in,
 * Gateway API out (src/convert/), as YAML on stdout; each finding (what the output does not keep) also on
 * stderr. Exit code: as `translate` for input that could not be loaded (2 a whole file, 1 an object);
 * with `--strict`, 1 when there is any finding but a note, so a pipeline can refuse a conversion that
 * loses behaviour. The written Gateway's ports are the Ingress listeners' (`--http-port`, `--https-port`),
 * 80 and 443 unless given: the ports clients use.
 */
import { convertIngresses } from "../convert/convert.ts";
import type { GatewayRef } from "../convert/gateway.ts";
import { conversionYaml, findingLines, summaryLine } from "../convert/output.ts";
import type { TranslateOptions } from "../translate/translate.ts";
import type { LoadedInput } from "./input.ts";

/**
 * `--gateway NS/NAME` and `--portable` (Gateway API only: no HTTPRouteFilter, no `(?i)`) taken out of the
 * arguments, and the client ports added unless given.
 */
export function convertArgs(
  rest: readonly string[],
): { gateway?: GatewayRef; portable: boolean; rest: string[] } | string {
  const out: string[] = [];
  let gateway: GatewayRef | undefined;
  let portable = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (arg === "--portable") {
      portable = true;
      continue;
    }
    const value = arg === "--gateway" ? rest[++i] : arg.startsWith("--gateway=") ? arg.slice(10) : undefined;
    if (value === undefined) {
      out.push(arg);
      continue;
    }
    const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(value);
    if (!m) return `--gateway "${value}" is not NAMESPACE/NAME`;
    gateway = { namespace: m[1] as string, name: m[3] as string };
  }
  const given = (flag: string) => out.some((a) => a === `--${flag}` || a.startsWith(`--${flag}=`));
  if (!given("http-port")) out.push("--http-port", "80");
  if (!given("https-port")) out.push("--https-port", "443");
  return { ...(gateway ? { gateway } : {}), portable, rest: out };
}

export async function runConvert(
  input: LoadedInput,
  options: Partial<TranslateOptions>,
  gateway: GatewayRef | undefined,
  portable: boolean,
  strict: boolean,
): Promise<number> {
  const result = convertIngresses(input.snapshot, {
    translate: options,
    ...(gateway ? { gateway } : {}),
    ...(portable ? { portable } : {}),
  });
  await Bun.write(Bun.stdout, conversionYaml(result));
  for (const p of input.problems) process.stderr.write(`gatehouse convert: load: ${p.message}\n`);
  for (const note of input.notes) process.stderr.write(`${note}\n`);
  for (const line of findingLines(result)) process.stderr.write(`${line}\n`);
  process.stderr.write(`${summaryLine(result)}\n`);
  if (input.exitCode !== 0) return input.exitCode;
  const counted = result.findings.filter((f) => f.kind !== "note").length;
  return strict && counted > 0 ? 1 : 0;
}
