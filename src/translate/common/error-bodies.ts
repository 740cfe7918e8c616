/**
 * The bodies of the gateway's own errors, from the ConfigMap `--error-pages-configmap` names (the role
 * ingress-nginx gives a default backend with `custom-http-errors` in its ConfigMap, without a backend to
 * run). Each key is `<code>.<ext>`: the code one the gateway answers itself (OWN_ERROR_CODES), the
 * extension the media type sent (ERROR_BODY_TYPES). One body per code, sent to every client as it is
 * written: there is no Accept negotiation, so a second key for a code is reported and left out (the first
 * in key order wins). A key of another shape, a code the gateway never makes itself, a body past
 * MAX_ERROR_BODY_BYTES and every `binaryData` key are reported (warning) and left out: the plain-text
 * error is answered there. A missing or unreadable ConfigMap is a warning too, and no code changes.
 */
import type { ErrorBody, Problem, SourceRef } from "../../model/index.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import { arrayOf, nameOf, namespaceOf } from "./objects.ts";

/** The codes of the errors the gateway answers itself (proxy/request/responses.ts STATUS_TEXT). */
export const OWN_ERROR_CODES: ReadonlySet<number> = new Set([
  400, 404, 405, 408, 413, 414, 431, 500, 502, 503, 504,
]);

/** Each extension a key may end in, and the Content-Type its body is sent with. */
export const ERROR_BODY_TYPES: Readonly<Record<string, string>> = {
  html: "text/html; charset=utf-8",
  json: "application/json",
  txt: "text/plain; charset=utf-8",
  xml: "application/xml",
};

/** Past this (UTF-8 bytes) a body is refused: an error page is one small page, kept in every process. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

const KEY = /^([1-5][0-9]{2})\.([a-z]{3,4})$/;

export interface ErrorBodiesResult {
  /** By code (`"404"`); undefined when no flag or no usable key. */
  readonly bodies: Readonly<Record<string, ErrorBody>> | undefined;
  readonly problems: readonly Problem[];
}

export function errorBodies(
  snapshot: ResourceSnapshot | undefined,
  named: string | undefined,
): ErrorBodiesResult {
  if (named === undefined) return { bodies: undefined, problems: [] };
  const [namespace = "", name = ""] = named.split("/");
  const ref: SourceRef = { kind: "ConfigMap", namespace, name };
  const problems: Problem[] = [];
  const warn = (message: string) =>
    problems.push({ object: ref, reason: "InvalidErrorPage", message, severity: "warning" });
  const unreadable = arrayOf(snapshot?.unreadable).find(
    (u) => u.kind === "ConfigMap" && u.namespace === namespace && u.name === name,
  );
  const cm = arrayOf(snapshot?.configMaps).find((c) => namespaceOf(c) === namespace && nameOf(c) === name);
  if (cm === undefined) {
    const why = unreadable === undefined ? "not found" : `unreadable (${unreadable.why})`;
    warn(`--error-pages-configmap ${named}: ${why}; the gateway's own errors keep their plain-text bodies`);
    return { bodies: undefined, problems };
  }
  for (const key of Object.keys(cm.binaryData ?? {}).sort())
    warn(`binaryData key ${key} is not read: error bodies are text, under data`);
  const out: Record<string, ErrorBody> = {};
  const data = cm.data ?? {};
  for (const key of Object.keys(data).sort()) {
    const m = KEY.exec(key);
    const code = Number(m?.[1]);
    const contentType = ERROR_BODY_TYPES[m?.[2] ?? ""];
    if (m === null || contentType === undefined) {
      warn(`key ${key} is not <code>.<${Object.keys(ERROR_BODY_TYPES).join("|")}>: left out`);
      continue;
    }
    if (!OWN_ERROR_CODES.has(code)) {
      warn(
        `key ${key}: ${code} is not among the errors whose body can be replaced (${[...OWN_ERROR_CODES].join(", ")}): left out`,
      );
      continue;
    }
    const body = data[key] ?? "";
    const bytes = Buffer.byteLength(body);
    if (bytes > MAX_ERROR_BODY_BYTES) {
      warn(`key ${key}: ${bytes} bytes, past the ${MAX_ERROR_BODY_BYTES} an error body may have: left out`);
      continue;
    }
    if (out[code] !== undefined) {
      warn(`key ${key}: ${code} already has a body (one body per code, no Accept negotiation): left out`);
      continue;
    }
    out[code] = { contentType, body };
  }
  return { bodies: Object.keys(out).length > 0 ? out : undefined, problems };
}
