/**
 * The bodies the gateway answers its own errors with (model `errorBodies`, `--error-pages-configmap`),
 * for the one place each front builds such an answer: responses.ts `errorResponse` (the bun front, and
 * whatever the raw front relays) and head-to-client.ts `generatedResponse` (the raw front's own answers:
 * unrouted 404s, 502/504 of its fast exchanges, refused heads). Process-wide, set by each model the
 * server applies: the flag is the process's, and errors made before any routing (a head that does not
 * parse) belong to no listener. A code without a body here keeps the plain-text one.
 */
import type { ErrorBody } from "../../model/index.ts";

export interface OwnErrorBody {
  readonly contentType: string;
  readonly text: string;
  /** `text` as UTF-8, made once: the raw front writes bytes. */
  readonly bytes: Buffer;
}

let bodies: ReadonlyMap<number, OwnErrorBody> = new Map();

/** Installs the model's bodies (undefined: none, every error plain text again). */
export function useOwnErrorBodies(fromModel: Readonly<Record<string, ErrorBody>> | undefined): void {
  const next = new Map<number, OwnErrorBody>();
  for (const [code, b] of Object.entries(fromModel ?? {}))
    next.set(Number(code), { contentType: b.contentType, text: b.body, bytes: Buffer.from(b.body, "utf8") });
  bodies = next;
}

/** The configured body for `status`, or undefined (the plain-text one applies). */
export function ownErrorBody(status: number): OwnErrorBody | undefined {
  return bodies.size === 0 ? undefined : bodies.get(status);
}
