import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RequestMirrorFilter } from "../../model/index.ts";
import { parseMirrorTarget } from "../../model/mirror-target.ts";
import type { MirrorOutcome, RequestObserver } from "../request/observer.ts";
import { selfSigned } from "../testing/certs.ts";
import type { RequestContext } from "./filter-types.ts";
import {
  compileRequestMirror,
  MAX_MIRROR_BYTES,
  MAX_MIRROR_COPIES,
  mirrorsInFlight,
} from "./request-mirror.ts";

interface Copy {
  method: string;
  path: string;
  host: string | null;
  length: string | null;
  body: string;
}

let copies: Copy[] = [];
let arrived: () => void = () => {};
let server: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      copies.push({
        method: req.method,
        path: url.pathname + url.search,
        host: req.headers.get("host"),
        length: req.headers.get("content-length"),
        body: await req.text(),
      });
      arrived();
      return new Response("ignored", { status: 500 });
    },
  });
});
afterAll(() => server.stop(true));

function outcomes(): { seen: MirrorOutcome[]; observer: RequestObserver } {
  const seen: MirrorOutcome[] = [];
  const observer = {
    begin: () => ({}) as never,
    end: () => {},
    mirrored: (_m: string, o: MirrorOutcome) => seen.push(o),
  } as RequestObserver;
  return { seen, observer };
}

function context(opts: {
  body?: string;
  read?: boolean;
  observer?: RequestObserver;
  url?: string;
}): RequestContext {
  const url = opts.url ?? "http://app.example/a/b?x=1";
  const req = new Request(url, {
    method: opts.body === undefined ? "GET" : "POST",
    headers: { host: "App.Example:8080", "x-seen": "yes" },
    ...(opts.body !== undefined ? { body: opts.body } : {}),
  });
  const headers = new Headers(req.headers);
  if (opts.body !== undefined) headers.set("content-length", String(Buffer.byteLength(opts.body)));
  const q = url.indexOf("?");
  return {
    req,
    headers,
    path: "/rewritten",
    query: q < 0 ? "" : url.slice(q),
    host: "App.Example:8080",
    prefix: "",
    timeoutMs: 2000,
    upstream: "",
    body: opts.body !== undefined && opts.read !== false ? new TextEncoder().encode(opts.body) : undefined,
    observer: opts.observer,
  };
}

function mirrorTo(url: string, extra: Partial<RequestMirrorFilter> = {}) {
  const parsed = parseMirrorTarget(url);
  if (!parsed.ok) throw new Error(parsed.message);
  const warnings: string[] = [];
  const f = compileRequestMirror(
    { kind: "RequestMirror", url: parsed.target, percent: 100, ...extra },
    new Map(),
    {},
    (w) => warnings.push(w),
  );
  expect(warnings).toEqual([]);
  return f.request as NonNullable<typeof f.request>;
}

/** Runs `send` and waits for `n` copies to arrive (or `waitMs`). */
async function copiesOf(n: number, send: () => void, waitMs = 1000): Promise<Copy[]> {
  copies = [];
  const all = new Promise<void>((resolve) => {
    arrived = () => copies.length >= n && resolve();
  });
  send();
  await Promise.race([all, Bun.sleep(waitMs)]);
  return copies;
}

/** Waits until the copies of earlier tests are done, for counts that start from none. */
async function settled(): Promise<void> {
  for (let i = 0; i < 200 && mirrorsInFlight().copies > 0; i++) await Bun.sleep(10);
  expect(mirrorsInFlight()).toEqual({ copies: 0, bytes: 0 });
}

describe("a URL target", () => {
  test("$request_uri, the target's host name as Host, the body read whole", async () => {
    const { seen, observer } = outcomes();
    const run = mirrorTo(`http://127.0.0.1:${server.port}/copy$request_uri`);
    const got = await copiesOf(1, () => expect(run(context({ body: "hello", observer }))).toBeUndefined());
    expect(got).toEqual([
      { method: "POST", path: "/copy/a/b?x=1", host: "127.0.0.1", length: "5", body: "hello" },
    ]);
    await Bun.sleep(20);
    expect(seen).toEqual(["answered"]);
  });

  test("mirror-host, and no body or Content-Length with body off", async () => {
    const run = mirrorTo(`http://127.0.0.1:${server.port}$request_uri`, {
      host: "test.env.com",
      body: false,
    });
    const got = await copiesOf(1, () => run(context({ body: "hello" })));
    expect(got).toEqual([{ method: "POST", path: "/a/b?x=1", host: "test.env.com", length: "0", body: "" }]);
  });

  test("other variables, a literal path (query appended) and no path (the request's)", async () => {
    const vars = mirrorTo(`http://127.0.0.1:${server.port}/v$uri/$host$is_args$args`);
    expect((await copiesOf(1, () => vars(context({}))))[0]?.path).toBe("/v/rewritten/app.example?x=1");
    const literal = mirrorTo(`http://127.0.0.1:${server.port}/fixed?k=v`);
    expect((await copiesOf(1, () => literal(context({}))))[0]?.path).toBe("/fixed?k=v&x=1");
    const none = mirrorTo(`http://127.0.0.1:${server.port}`);
    expect((await copiesOf(1, () => none(context({ url: "http://a/p" }))))[0]).toMatchObject({
      path: "/rewritten",
      host: "127.0.0.1",
    });
  });

  test("a streamed body is not mirrored, and said so", async () => {
    const { seen, observer } = outcomes();
    const run = mirrorTo(`http://127.0.0.1:${server.port}$request_uri`);
    const got = await copiesOf(1, () => run(context({ body: "big", read: false, observer })), 200);
    expect(got).toEqual([]);
    expect(seen).toEqual(["skipped_streamed_body"]);
    // With bodies off, the same request is mirrored without its body.
    const off = mirrorTo(`http://127.0.0.1:${server.port}$request_uri`, { body: false });
    expect(await copiesOf(1, () => off(context({ body: "big", read: false })))).toHaveLength(1);
  });

  test("a mirror that is down fails quietly, counted", async () => {
    const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = closed.port;
    closed.stop(true);
    const { seen, observer } = outcomes();
    mirrorTo(`http://127.0.0.1:${port}/`)(context({ observer }));
    for (let i = 0; i < 100 && seen.length === 0; i++) await Bun.sleep(10);
    expect(seen).toEqual(["failed"]);
  });

  test("an https mirror's certificate is verified: an untrusted one gets no copy", async () => {
    const cert = selfSigned("mirror.test");
    let reached = 0;
    const tls = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: cert.certPem, key: cert.keyPem },
      fetch: () => {
        reached++;
        return new Response("no");
      },
    });
    try {
      const { seen, observer } = outcomes();
      mirrorTo(`https://127.0.0.1:${tls.port}$request_uri`, { host: "mirror.test" })(context({ observer }));
      for (let i = 0; i < 100 && seen.length === 0; i++) await Bun.sleep(10);
      expect(seen).toEqual(["failed"]);
      expect(reached).toBe(0);
    } finally {
      tls.stop(true);
    }
  });

  test("an https mirror whose CA the process trusts (NODE_EXTRA_CA_CERTS) gets the copy", async () => {
    // The copy's fetch trusts the system's CAs and NODE_EXTRA_CA_CERTS, read when the process starts:
    // the copy is made by a child process given the test CA that way.
    const cert = selfSigned("mirror.test");
    const dir = await mkdtemp(join(tmpdir(), "gatehouse-mirror-ca-"));
    const got: { host: string | null; path: string }[] = [];
    const tls = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: cert.certPem, key: cert.keyPem },
      fetch: (req) => {
        const url = new URL(req.url);
        got.push({ host: req.headers.get("host"), path: url.pathname + url.search });
        return new Response("ok");
      },
    });
    try {
      await writeFile(join(dir, "ca.pem"), cert.certPem);
      const script = join(dir, "copy.ts");
      await writeFile(
        script,
        `import { parseMirrorTarget } from ${JSON.stringify(join(import.meta.dir, "../../model/mirror-target.ts"))};
import { compileRequestMirror } from ${JSON.stringify(join(import.meta.dir, "request-mirror.ts"))};
const t = parseMirrorTarget("https://127.0.0.1:${tls.port}/copy$request_uri");
const f = compileRequestMirror({ kind: "RequestMirror", url: t.target, percent: 100, host: "mirror.test" }, new Map(), {}, () => {});
const outcome = await new Promise((resolve) =>
  f.request({ req: new Request("http://app.example/a?x=1"), headers: new Headers(), path: "/a", query: "?x=1",
    host: "app.example", prefix: "", timeoutMs: 5000, upstream: "", observer: { mirrored: (_m, o) => resolve(o) } }),
);
console.log(JSON.stringify({ outcome }));
`,
      );
      const child = Bun.spawn([process.execPath, script], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, "ca.pem") },
        stdout: "pipe",
        stderr: "pipe",
      });
      const out = await new Response(child.stdout).text();
      expect(await child.exited).toBe(0);
      expect(out.trim().split("\n").at(-1)).toBe(JSON.stringify({ outcome: "answered" }));
      // The certificate names only mirror.test: verified against mirror-host, not the address dialled.
      expect(got).toEqual([{ host: "mirror.test", path: "/copy/a?x=1" }]);
    } finally {
      tls.stop(true);
      await rm(dir, { recursive: true, force: true });
    }
  });

  test(`at most ${MAX_MIRROR_COPIES} copies in flight in the process, across filters (reloads)`, async () => {
    await settled();
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const { seen, observer } = outcomes();
    // Each reload compiles a new filter while the old one's copies still wait: the bound is shared.
    const before = mirrorTo(`http://127.0.0.1:${silent.port}/`);
    const after = mirrorTo(`http://127.0.0.1:${silent.port}/`);
    for (let i = 0; i < MAX_MIRROR_COPIES - 1; i++) before(context({ observer }));
    after(context({ observer }));
    expect(seen).toEqual([]);
    expect(mirrorsInFlight().copies).toBe(MAX_MIRROR_COPIES);
    after(context({ observer }));
    before(context({ observer }));
    expect(seen).toEqual(["skipped_busy", "skipped_busy"]);
    silent.stop(true);
    for (let i = 0; i < 200 && seen.length < MAX_MIRROR_COPIES + 2; i++) await Bun.sleep(10);
    expect(seen.filter((o) => o === "failed")).toHaveLength(MAX_MIRROR_COPIES);
    expect(mirrorsInFlight()).toEqual({ copies: 0, bytes: 0 });
  });

  test(`at most ${MAX_MIRROR_BYTES / 1024 / 1024} MiB of bodies held by copies in flight`, async () => {
    await settled();
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const { seen, observer } = outcomes();
    const quarter = MAX_MIRROR_BYTES / 4;
    const big = context({ body: "b", observer });
    const ctx: RequestContext = { ...big, body: new Uint8Array(quarter) };
    ctx.headers.set("content-length", String(quarter));
    const run = mirrorTo(`http://127.0.0.1:${silent.port}/`);
    for (let i = 0; i < 4; i++) run(ctx);
    expect(mirrorsInFlight()).toEqual({ copies: 4, bytes: MAX_MIRROR_BYTES });
    run(ctx);
    expect(seen).toEqual(["skipped_busy"]);
    // A copy without a body still goes.
    mirrorTo(`http://127.0.0.1:${silent.port}/`, { body: false })(ctx);
    expect(mirrorsInFlight()).toEqual({ copies: 5, bytes: MAX_MIRROR_BYTES });
    silent.stop(true);
    for (let i = 0; i < 200 && seen.length < 6; i++) await Bun.sleep(10);
    expect(seen.filter((o) => o === "failed")).toHaveLength(5);
    expect(mirrorsInFlight()).toEqual({ copies: 0, bytes: 0 });
  });
});

test("a backend mirror keeps the request's Host and path; an unknown backend is warned about", async () => {
  const backend = { id: "ns/m:80", bases: [`http://127.0.0.1:${server.port}`], next: 0 } as never;
  const run = compileRequestMirror(
    { kind: "RequestMirror", backendId: "ns/m:80", percent: 100 },
    new Map([["ns/m:80", backend]]),
    { "ns/m:80": {} as never },
    () => {},
  ).request as NonNullable<ReturnType<typeof compileRequestMirror>["request"]>;
  const got = await copiesOf(1, () => run(context({ body: "small" })));
  expect(got).toEqual([
    { method: "POST", path: "/rewritten?x=1", host: "App.Example:8080", length: "5", body: "small" },
  ]);
  const warnings: string[] = [];
  compileRequestMirror({ kind: "RequestMirror", backendId: "nope", percent: 100 }, new Map(), {}, (w) =>
    warnings.push(w),
  );
  expect(warnings).toEqual(["RequestMirror names unknown backend nope; nothing is mirrored"]);
});
