/**
 * Watch streams of the test API server, as the real one sends them: one JSON event per line; with no
 * resourceVersion (or "0") the current objects as ADDED first; from a resourceVersion, the kept events
 * after it, or one ERROR event carrying a 410 Expired Status when they are no longer kept; BOOKMARKs
 * when asked for; an object that starts or stops matching the label selector arrives as ADDED/DELETED.
 */
import {
  ApiError,
  apiVersionOf,
  type Obj,
  type ResourceDef,
  type Store,
  type StoredEvent,
} from "./kube-api-store.ts";

export interface WatchTarget {
  readonly r: ResourceDef;
  /** "" = all namespaces. */
  readonly namespace: string;
}

export function watchResponse(
  store: Store,
  t: WatchTarget,
  q: URLSearchParams,
  open: Set<() => void>,
  bookmarkIntervalMs: number,
): Response {
  const selector = parseSelector(q.get("labelSelector") ?? "");
  const bookmarks = q.get("allowWatchBookmarks") === "true";
  const rvParam = q.get("resourceVersion") ?? "";
  const timeoutSeconds = Number(q.get("timeoutSeconds") ?? 0);
  const enc = new TextEncoder();
  const inNamespace = (o: Obj) => !t.namespace || o.metadata?.namespace === t.namespace;
  let cleanup = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => {
      const send = (type: string, object: Obj) => {
        try {
          c.enqueue(enc.encode(`${JSON.stringify({ type, object })}\n`));
        } catch {
          cleanup();
        }
      };
      const deliver = (e: StoredEvent) => {
        if (!inNamespace(e.object)) return;
        const now = selector(e.object.metadata?.labels ?? {});
        const before = e.old ? selector(e.old.metadata?.labels ?? {}) : now;
        if (e.type === "MODIFIED" && before !== now) send(now ? "ADDED" : "DELETED", e.object);
        else if (now) send(e.type, e.object);
      };
      let closed = false;
      const timers: ReturnType<typeof setInterval>[] = [];
      let off = () => {};
      cleanup = () => {
        if (closed) return;
        closed = true;
        off();
        for (const tm of timers) clearInterval(tm);
        open.delete(cleanup);
        try {
          c.close();
        } catch {
          // already closed by the client
        }
      };
      open.add(cleanup);
      if (rvParam === "" || rvParam === "0") {
        for (const o of store.list(t.r, t.namespace || undefined))
          if (selector(o.metadata?.labels ?? {})) send("ADDED", o);
      } else {
        try {
          for (const e of store.since(t.r, Number(rvParam))) deliver(e);
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          send("ERROR", err.toStatus());
          cleanup();
          return;
        }
      }
      off = store.onEvent((r, e) => {
        if (r === t.r) deliver(e);
      });
      if (bookmarks) {
        const bookmark = () =>
          send("BOOKMARK", {
            kind: t.r.kind,
            apiVersion: apiVersionOf(t.r),
            metadata: { resourceVersion: String(store.rv) },
          });
        timers.push(setInterval(bookmark, bookmarkIntervalMs));
      }
      if (timeoutSeconds > 0) timers.push(setInterval(cleanup, timeoutSeconds * 1000));
    },
    cancel: () => cleanup(),
  });
  return new Response(stream, {
    headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
  });
}

/** Label selectors: `a=b`, `a==b`, `a!=b`, `a` (exists), `!a` (absent), comma-separated (AND). */
export function parseSelector(text: string): (labels: Record<string, string>) => boolean {
  const terms = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const tests = terms.map((term): ((l: Record<string, string>) => boolean) => {
    const ne = term.match(/^([^!=]+)!=(.*)$/);
    if (ne) return (l) => l[(ne[1] as string).trim()] !== (ne[2] as string).trim();
    const eq = term.match(/^([^!=]+)==?(.*)$/);
    if (eq) return (l) => l[(eq[1] as string).trim()] === (eq[2] as string).trim();
    if (term.startsWith("!")) return (l) => !(term.slice(1) in l);
    return (l) => term in l;
  });
  return (labels) => tests.every((t) => t(labels));
}
