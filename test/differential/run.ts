/**
 * One differential run: every probe sent byte for byte to every target at once (each target has its own
 * backends, so what reached them is unambiguous), the answers on the connection parsed, and each pair
 * of targets compared. The comparison is about routing first: which backend got which method, path and
 * body, or which direct answer came back, in order. Statuses only decide who was stricter.
 */
import { connect } from "node:net";
import type { Received } from "./backend.ts";
import { PROBES, type Probe } from "./probes.ts";
import type { Target, TargetName, Targets } from "./targets.ts";

/** One response on the probe's connection. */
export interface Answer {
  readonly status: number;
  /** `dest=` of the body (a backend, `catch-all`, `app-404`, `injected`), else `proxy`: the target's own. */
  readonly origin: string;
}

export interface Outcome {
  readonly answers: readonly Answer[];
  /** The target closed the connection (false: it was still open when the probe gave up). */
  readonly closed: boolean;
  /** What reached this target's backends, in arrival order. */
  readonly forwarded: readonly Received[];
  /** Where each request went, in order: a backend request's key, or a direct answer's name. */
  readonly routed: readonly string[];
}

export type Verdict =
  | "same"
  | "same route, forwarded form differs"
  | "both refuse (different 4xx)"
  | "left stricter"
  | "right stricter"
  | "different status"
  | "DIFFERENT BACKEND/PATH";

export interface ProbeResult {
  readonly probe: Probe;
  readonly outcomes: Readonly<Record<TargetName, Outcome>>;
}

const PROBE_TIMEOUT_MS = 1200;
/** After the client connection ends, time for a request still in flight to reach a backend. */
const SETTLE_MS = 30;

export async function runProbes(targets: Targets, probes: readonly Probe[] = PROBES): Promise<ProbeResult[]> {
  const results: ProbeResult[] = [];
  for (const probe of probes) {
    const got = await Promise.all(targets.list.map((t) => probeTarget(t, probe)));
    const outcomes = Object.fromEntries(got.map((o, i) => [targets.list[i]?.name, o])) as Record<
      TargetName,
      Outcome
    >;
    results.push({ probe, outcomes });
    // A backend-fault answer may hold a poisoned upstream connection open for 100 ms (backend.ts).
    if (probe.class === "backend-fault") await Bun.sleep(150);
  }
  return results;
}

async function probeTarget(t: Target, probe: Probe): Promise<Outcome> {
  t.recorder.take();
  const { bytes, closed } = await exchange(t.port, probe.bytes);
  await Bun.sleep(SETTLE_MS);
  const answers = parseAnswers(bytes);
  const forwarded = t.recorder.take();
  return { answers, closed, forwarded, routed: routedList(answers, forwarded) };
}

/** Writes `bytes` on a fresh connection and reads until the target closes it or the probe gives up. */
function exchange(port: number, bytes: string): Promise<{ bytes: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let closed = true;
    const socket = connect({ host: "127.0.0.1", port }, () => socket.write(Buffer.from(bytes, "latin1")));
    const timer = setTimeout(() => {
      closed = false;
      socket.destroy();
    }, PROBE_TIMEOUT_MS);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ bytes: Buffer.concat(chunks), closed });
    });
  });
}

/** Every response in `raw`, in order; bytes that are no response become one with status 0. */
export function parseAnswers(raw: Buffer): Answer[] {
  const out: Answer[] = [];
  let rest = raw.toString("latin1");
  while (rest.length > 0) {
    const status = /^HTTP\/\d\.\d (\d{3})/.exec(rest);
    const end = /\r?\n\r?\n/.exec(rest);
    if (status === null || end === null) {
      // Relayed as HTTP/0.9 (nginx passes a backend's bytes on when they have no status line): whose
      // bytes they are shows anywhere in them.
      out.push({ status: 0, origin: /dest=([\w-]+)/.exec(rest)?.[1] ?? "proxy" });
      break;
    }
    const code = Number(status[1]);
    const head = rest.slice(0, end.index);
    let body = rest.slice(end.index + end[0].length);
    rest = "";
    if ((code >= 100 && code < 200 && code !== 101) || code === 204 || code === 304) {
      out.push({ status: code, origin: "proxy" });
      rest = body;
      continue;
    }
    const cl = /\r?\ncontent-length:[ \t]*(\d+)/i.exec(head);
    if (code !== 101 && /\r?\ntransfer-encoding:[^\r\n]*chunked/i.test(head)) {
      const [decoded, used] = dechunk(body);
      rest = body.slice(used);
      body = decoded;
    } else if (code !== 101 && cl !== null) {
      rest = body.slice(Number(cl[1]));
      body = body.slice(0, Number(cl[1]));
    }
    out.push({ status: code, origin: originOf(body) });
  }
  return out;
}

function originOf(body: string): string {
  return /^dest=([\w-]+)/.exec(body)?.[1] ?? "proxy";
}

/** The chunked body at the start of `s`, and how many bytes of `s` it took. */
function dechunk(s: string): [string, number] {
  let pos = 0;
  let out = "";
  for (;;) {
    const eol = s.indexOf("\r\n", pos);
    if (eol < 0) return [out, s.length];
    const size = Number.parseInt(s.slice(pos, eol), 16);
    if (!(size > 0)) {
      const end = s.indexOf("\r\n\r\n", eol);
      return [out, s.startsWith("\r\n", eol + 2) ? eol + 4 : end < 0 ? s.length : end + 4];
    }
    out += s.slice(eol + 2, eol + 2 + size);
    pos = eol + 2 + size + 2;
  }
}

/** Answers that name a route without a backend: the two direct answers, and bytes a backend sent unasked. */
const DIRECT = new Set(["catch-all", "app-404", "injected"]);

/**
 * Where each request went, in order. A backend's answer stands for the next request that backend got; a
 * 101 or a 502/503/504 of the target's own for the next request any backend got (it reached one, whose
 * answer the target did not relay as it was); backend requests that no answer stands for (a smuggled
 * request, one the target gave up on) follow at the end. Refusals route nowhere and add nothing.
 */
export function routedList(answers: readonly Answer[], forwarded: readonly Received[]): string[] {
  const queue = [...forwarded];
  const take = (backend?: string) => {
    const i = queue.findIndex((r) => backend === undefined || r.backend === backend);
    return i < 0 ? undefined : queue.splice(i, 1)[0];
  };
  const out: string[] = [];
  for (const a of answers) {
    if (a.status >= 100 && a.status < 200 && a.status !== 101) continue;
    if (a.origin === "public" || a.origin === "admin") {
      const r = take(a.origin);
      out.push(r === undefined ? `${a.origin} (answered, never received)` : keyOf(r));
    } else if (DIRECT.has(a.origin)) out.push(a.origin);
    else if (a.status === 101 || (a.status >= 502 && a.status <= 504)) {
      const r = take();
      if (r !== undefined) out.push(keyOf(r));
    }
  }
  return [...out, ...queue.map(keyOf)];
}

const ABORTED = "(aborted)";

/**
 * A backend request as routing sees it: backend, method, normalised path, the body if any, and field
 * names with an underscore. Those last are there because CGI-style environments (WSGI, Rack, PHP) give
 * `X_Forwarded_For` and `X-Forwarded-For` one name: a proxy that passes them hands the backend a field
 * (or, to a server that frames by such a name, a framing) it never checked.
 */
export function keyOf(r: Received): string {
  // A request the target began to send and then abandoned (a streamed body it found malformed).
  if (r.method === "") return `${r.backend} ${ABORTED}`;
  const body = r.body === "" ? "" : ` body=${JSON.stringify(r.body)}`;
  const head = r.raw.slice(0, r.raw.search(/\r?\n\r?\n/));
  const underscored = [...head.matchAll(/\n([^:\r\n]*_[^:\r\n]*):/g)].map((m) => m[1]?.toLowerCase());
  const fields = underscored.length === 0 ? "" : ` fields=${underscored.join(",")}`;
  return `${r.backend} ${r.method} ${normalisePath(r.target)}${body}${fields}`;
}

/**
 * The path a backend acts on, whatever form it came in: an absolute-form target's path, no fragment,
 * unreserved characters decoded, slashes merged (as both proxies route), dot segments removed (RFC 3986
 * §5.2.4). `%2F`, `\` and other escapes stay as they are: to a backend they may or may not be separators.
 */
export function normalisePath(target: string): string {
  let t = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, "");
  t = t.split("#")[0] ?? "";
  const q = t.indexOf("?");
  const query = q < 0 ? "" : t.slice(q);
  let path = q < 0 ? t : t.slice(0, q);
  path = path
    .replace(/%([0-9a-f]{2})/gi, (m, hex: string) => {
      const c = String.fromCharCode(Number.parseInt(hex, 16));
      return /[A-Za-z0-9\-._~]/.test(c) ? c : m.toUpperCase();
    })
    .replace(/[^\x21-\x7e]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
  path = path.replace(/\/{2,}/g, "/");
  const out: string[] = [];
  const segments = path.split("/");
  segments.forEach((s, i) => {
    const last = i === segments.length - 1;
    if (s === ".") {
      if (last) out.push("");
    } else if (s === "..") {
      if (out.length > 1) out.pop();
      if (last) out.push("");
    } else out.push(s);
  });
  return (out.join("/") || "/") + query;
}

const finals = (o: Outcome) => o.answers.filter((a) => a.status >= 200 || a.status === 101 || a.status === 0);
/** No answer, an error status, or bytes that are no response and no backend's. */
const refused = (a: Answer | undefined) =>
  a === undefined || a.status >= 400 || (a.status === 0 && a.origin === "proxy");
const backendOf = (key: string | undefined) => key?.split(" ", 1)[0];

/**
 * How `left` and `right` differ on one probe. Routing first: at the first place the routed lists part,
 * the side that has nothing more, or that abandoned its request to the same backend, refused what the
 * other forwarded (stricter); anything else is a different route. Same routes: statuses decide.
 */
export function compare(left: Outcome, right: Outcome): Verdict {
  const [l, r] = [left.routed, right.routed];
  for (let i = 0; i < Math.max(l.length, r.length); i++) {
    const [a, b] = [l[i], r[i]];
    if (a === b) continue;
    const abandoned = (x: string | undefined, y: string | undefined, rest: number) =>
      x === undefined || (x.endsWith(ABORTED) && backendOf(x) === backendOf(y) && rest === i + 1);
    if (abandoned(a, b, l.length)) return "left stricter";
    if (abandoned(b, a, r.length)) return "right stricter";
    return "DIFFERENT BACKEND/PATH";
  }
  const [ls, rs] = [finals(left), finals(right)];
  const at = Array.from({ length: Math.max(ls.length, rs.length) }, (_, i) => i).find(
    (i) => ls[i]?.status !== rs[i]?.status,
  );
  if (at !== undefined) {
    const [a, b] = [ls[at], rs[at]];
    if (refused(a) && refused(b)) return "both refuse (different 4xx)";
    if (refused(a)) return "left stricter";
    if (refused(b)) return "right stricter";
    return "different status";
  }
  const form = (o: Outcome) => o.forwarded.map((f) => `${f.requestLine} host=${f.host}`).join("\n");
  return form(left) === form(right) ? "same" : "same route, forwarded form differs";
}

/** The pairs compared: each front against nginx, and the fronts against each other. */
export const PAIRS = [
  ["raw", "nginx"],
  ["bun", "nginx"],
  ["raw", "bun"],
] as const satisfies readonly (readonly [TargetName, TargetName])[];
export type Pair = `${(typeof PAIRS)[number][0]}-${(typeof PAIRS)[number][1]}`;

export function pairName([l, r]: readonly [TargetName, TargetName]): Pair {
  return `${l}-${r}` as Pair;
}

/** The verdict with the names in it: `left stricter` on raw-nginx reads `gatehouse stricter`. */
export function verdictText(v: Verdict, [l, r]: readonly [TargetName, TargetName]): string {
  const name = (t: TargetName) => (r === "nginx" && t !== "nginx" ? "gatehouse" : t);
  if (v === "left stricter") return `${name(l)} stricter`;
  if (v === "right stricter") return `${name(r)} stricter`;
  return v;
}
