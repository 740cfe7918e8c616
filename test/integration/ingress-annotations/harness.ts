/**
 * The live half of the annotation table: per honoured ingress-nginx annotation, the request ingress-nginx's
 * docs describe and the response they promise, run on both fronts against one gateway per front that
 * serves every case's Ingress from one folder (each case on a host of its own). A case file
 * (`*.cases.ts` in this folder, each exporting `cases`) holds one family's cases; the runner
 * (annotations.test.ts) finds them all.
 *
 * The backend (`startScriptedBackend`) is a raw socket server, so a case can ask for what no HTTP library
 * does on request: by path, `/slow/<ms>` answers after that long, `/flaky/<key>` answers 503 the first
 * time a key is seen and 200 after, `/noread` reads the head and then nothing (never answering),
 * `/respond-headers?<name>=<value>&…` answers 200 (body `headers`) with each query pair as a response
 * header line, in order, repeats kept as separate lines (e.g. `set-cookie=a%3D1&set-cookie=b%3D2`; a name
 * that is not a token, a framing field (Content-Length, Transfer-Encoding, Connection) or a value with CR,
 * LF or NUL makes it answer 400 instead), and any other path answers 200 with the request it saw as JSON
 * (method, path, headers).
 */
import type { Socket, TCPSocketListener } from "bun";

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  /** Lower-case names; repeated fields joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
}

export interface CaseResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
  /** What the backend saw, when the answer is its echo (undefined otherwise). */
  readonly seen: SeenRequest | undefined;
  readonly ms: number;
  /** The case's own host (`<index>.case.test`), and the gateway's port the request went to. */
  readonly caseHost: string;
  readonly port: number;
}

export interface AnnotationCase {
  /** What the case shows, as the test's name. */
  readonly name: string;
  /** The annotations it exercises (without prefix), for the coverage check. */
  readonly covers: readonly string[];
  /** `nginx.ingress.kubernetes.io/<key>` → value, on the case's Ingress. */
  readonly annotations: Readonly<Record<string, string>>;
  /** Paths of the Ingress (Prefix unless `pathType` says), all to the scripted backend. Default ["/"]. */
  readonly paths?: readonly { readonly path: string; readonly pathType?: string }[];
  /** More hosts of the Ingress, after the case's own, each with the same paths (names unique to the case). */
  readonly hosts?: readonly string[];
  /** The request's Host when not the case's own: a name, or made from the case's own (aliases, www). */
  readonly requestHost?: string | ((caseHost: string) => string);
  /** The request: path (with query), method, headers, body. The Host is the case's own (or `requestHost`). */
  readonly request: {
    readonly path: string;
    readonly method?: string;
    readonly headers?: Readonly<Record<string, string>>;
    readonly body?: string;
  };
  /** More YAML documents for the folder (a ConfigMap the Ingress names), in namespace `cases`; their
   * names must be unique across cases. */
  readonly manifests?: string;
  /** Checks the response (expect() inside). */
  check(res: CaseResponse): void;
}

interface Conn {
  buf: string;
}

/** The scripted backend; `stop()` closes it. */
export function startScriptedBackend(): { port: number; stop(): void } {
  const seenKeys = new Set<string>();
  const answer = (s: Socket<Conn>, status: number, body: string, type = "text/plain", fields = "") => {
    s.write(
      `HTTP/1.1 ${status} X\r\nContent-Type: ${type}\r\n${fields}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    s.end();
  };
  const server: TCPSocketListener<Conn> = Bun.listen<Conn>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        s.data = { buf: "" };
      },
      data(s, chunk) {
        if (s.data.buf === "\0") return;
        s.data.buf += chunk.toString("latin1");
        const end = s.data.buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const [line = "", ...fields] = s.data.buf.slice(0, end).split("\r\n");
        s.data.buf = "\0";
        const [method = "", path = ""] = line.split(" ");
        const headers: Record<string, string> = {};
        for (const f of fields) {
          const i = f.indexOf(":");
          const name = f.slice(0, i).toLowerCase();
          const value = f.slice(i + 1).trim();
          headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
        }
        const slow = /^\/slow\/(\d+)/.exec(path);
        const flaky = /^\/flaky\/([^/?]+)/.exec(path);
        if (path.startsWith("/noread")) s.pause();
        else if (path.startsWith("/respond-headers?")) {
          const fields = respondFields(path.slice(path.indexOf("?") + 1));
          if (fields === undefined) answer(s, 400, "bad header");
          else answer(s, 200, "headers", "text/plain", fields);
        } else if (slow) setTimeout(() => answer(s, 200, "slow"), Number(slow[1]));
        else if (flaky && !seenKeys.has(flaky[1] as string)) {
          seenKeys.add(flaky[1] as string);
          answer(s, 503, "flaky");
        } else answer(s, 200, JSON.stringify({ method, path, headers }), "application/json");
      },
    },
  });
  return { port: server.port, stop: () => server.stop(true) };
}

/** Fields the backend's own answer frames itself with: a case may not send them. */
const FRAMING = new Set(["content-length", "transfer-encoding", "connection"]);

/** `/respond-headers`' query as field lines; undefined when a pair could not be a header field. */
function respondFields(query: string): string | undefined {
  let out = "";
  for (const [name, value] of new URLSearchParams(query)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n\0]/.test(value)) return undefined;
    if (FRAMING.has(name.toLowerCase())) return undefined;
    out += `${name}: ${value}\r\n`;
  }
  return out;
}

/** The manifests of every case: one Ingress per case on host `<index>.case.test`, and the Service. */
export function caseManifests(cases: readonly AnnotationCase[], backendPort: number): string {
  const docs = cases.map((c, i) => {
    const paths = (c.paths ?? [{ path: "/" }])
      .map(
        (p) =>
          `          - { path: ${JSON.stringify(p.path)}, pathType: ${p.pathType ?? "Prefix"}, backend: { service: { name: scripted, port: { number: 80 } } } }`,
      )
      .join("\n");
    const annotations = Object.fromEntries(
      Object.entries(c.annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v]),
    );
    const rules = [caseHost(i), ...(c.hosts ?? [])]
      .map((host) => `    - host: ${JSON.stringify(host)}\n      http:\n        paths:\n${paths}\n`)
      .join("");
    return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: case-${i}
  namespace: cases
  annotations: ${JSON.stringify(annotations)}
spec:
  ingressClassName: gatehouse
  rules:
${rules}`;
  });
  for (const c of cases) if (c.manifests !== undefined) docs.push(c.manifests);
  docs.push(`apiVersion: v1
kind: Service
metadata: { name: scripted, namespace: cases }
spec: { ports: [{ name: http, port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: scripted-1, namespace: cases, labels: { kubernetes.io/service-name: scripted } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ name: http, port: ${backendPort} }]
`);
  return docs.join("---\n");
}

export function caseHost(index: number): string {
  return `${index}.case.test`;
}

/** Sends a case's request to the gateway on `port` and reads the whole answer. */
export async function sendCase(port: number, index: number, c: AnnotationCase): Promise<CaseResponse> {
  const t0 = performance.now();
  const own = caseHost(index);
  const host =
    c.requestHost === undefined
      ? own
      : typeof c.requestHost === "string"
        ? c.requestHost
        : c.requestHost(own);
  const res = await fetch(`http://127.0.0.1:${port}${c.request.path}`, {
    method: c.request.method ?? "GET",
    headers: { host, ...c.request.headers },
    ...(c.request.body !== undefined ? { body: c.request.body } : {}),
    redirect: "manual",
  });
  const body = await res.text();
  let seen: SeenRequest | undefined;
  if (res.headers.get("content-type") === "application/json") {
    try {
      const parsed = JSON.parse(body) as SeenRequest;
      if (typeof parsed.path === "string") seen = parsed;
    } catch {
      // not the backend's echo
    }
  }
  return {
    status: res.status,
    headers: res.headers,
    body,
    seen,
    ms: performance.now() - t0,
    caseHost: own,
    port,
  };
}
