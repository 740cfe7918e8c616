/**
 * TLS pieces of the https section (https.ts): the bench's certificate, the Secret that hands it to
 * Gatehouse and the nginx directives that serve it, so both proxies terminate TLS with the same key and a
 * comparable policy.
 */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { modernCiphers } from "../src/proxy/listeners/tls.ts";

/**
 * TLS 1.2 suites nginx may pick: the ones Gatehouse restricts itself to (docs/tls.md), so both sides offer
 * the same; TLS 1.3 suites are the library's defaults on both sides (all AEAD).
 */
export const BENCH_TLS12_CIPHERS = modernCiphers;

/** PEM files on disk (nginx reads paths) and their text (the Secret carries the text). */
export interface BenchCertificate {
  readonly certFile: string;
  readonly keyFile: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/**
 * `openssl req` arguments for a self-signed EC P-256 certificate (the key type Gatehouse generates for its
 * own default certificate) covering `names`. `127.0.0.1` becomes an IP entry: wrk connects by address.
 */
export function selfSignedArgs(keyFile: string, certFile: string, names: readonly string[]): string[] {
  const san = names.map((n) => (/^[\d.]+$/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(",");
  return [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "2",
    "-subj",
    `/CN=${names[0] ?? "bench.test"}`,
    "-addext",
    `subjectAltName=${san}`,
    "-keyout",
    keyFile,
    "-out",
    certFile,
  ];
}

/** Make the certificate with the openssl CLI into `dir` (tls.key, tls.crt). */
export async function makeCertificate(dir: string, names: readonly string[]): Promise<BenchCertificate> {
  const keyFile = join(dir, "tls.key");
  const certFile = join(dir, "tls.crt");
  const r = Bun.spawnSync(["openssl", ...selfSignedArgs(keyFile, certFile, names)], {
    stdout: "ignore",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`openssl req: ${r.stderr.toString()}`);
  return {
    certFile,
    keyFile,
    certPem: await readFile(certFile, "utf8"),
    keyPem: await readFile(keyFile, "utf8"),
  };
}

/** A kubernetes.io/tls Secret holding the certificate, as YAML (one document). */
export function tlsSecretYaml(
  namespace: string,
  name: string,
  cert: Pick<BenchCertificate, "certPem" | "keyPem">,
) {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return stringify({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace },
    type: "kubernetes.io/tls",
    data: { "tls.crt": b64(cert.certPem), "tls.key": b64(cert.keyPem) },
  });
}

/**
 * nginx's http-level TLS directives. Sessions as Gatehouse (BoringSSL) handles them: stateless tickets
 * issued after each full handshake and resumed when a client offers one, no server-side cache. Both
 * sides then do the same work for a new client (a full handshake and its tickets) and for a returning
 * one (a resumption); https.ts checks both behaviours on every target. `ssl_prefer_server_ciphers off`
 * is Mozilla's intermediate setting: every suite offered is AEAD, so the client's order is fine.
 */
export function nginxTlsDirectives(cert: Pick<BenchCertificate, "certFile" | "keyFile">): string {
  return [
    `ssl_certificate ${cert.certFile};`,
    `ssl_certificate_key ${cert.keyFile};`,
    "ssl_protocols TLSv1.2 TLSv1.3;",
    `ssl_ciphers ${BENCH_TLS12_CIPHERS};`,
    "ssl_prefer_server_ciphers off;",
    "ssl_session_cache off;",
    "ssl_session_tickets on;",
  ]
    .map((l) => `  ${l}\n`)
    .join("");
}

/** What one TLS handshake with a target settled, from `openssl s_client`'s report. */
export interface HandshakeFacts {
  /** e.g. "TLSv1.3 TLS_AES_256_GCM_SHA384" */
  readonly negotiated: string;
  /** Key exchange group, e.g. "X25519". */
  readonly group: string;
  /** Signature type of the server's certificate, e.g. "ECDSA". */
  readonly signature: string;
  /** Whether the line says the session was resumed ("Reused, …"). */
  readonly reused: boolean;
}

/** Read `openssl s_client`'s report; throws when it shows no handshake. */
export function parseSClient(out: string): HandshakeFacts {
  const m = /^(New|Reused), (TLSv[\d.]+), Cipher is (\S+)/m.exec(out);
  if (!m) throw new Error(`no TLS handshake in openssl s_client's output:\n${out.slice(0, 2000)}`);
  return {
    negotiated: `${m[2]} ${m[3]}`,
    group: /^Server Temp Key: ([^,\s]+)/m.exec(out)?.[1] ?? "?",
    signature: /^Peer signature type: (\S+)/m.exec(out)?.[1] ?? "?",
    reused: m[1] === "Reused",
  };
}

/**
 * Handshakes with 127.0.0.1:`port` (SNI `host`), each sending one request that closes the connection
 * (so the session tickets that follow the handshake are read before it ends): a first one saves its
 * session, then `tries` more offer it. Says what a new client gets and how often a returning one is
 * resumed, which tells what wrk's reconnects measure (wrk offers the previous session every time). With
 * several server processes behind one port, a ticket works only where its key is: nginx's workers share
 * theirs, Gatehouse's `--workers` each have their own.
 */
export async function probeHandshakes(
  dir: string,
  port: number,
  host: string,
  tries: number,
): Promise<{ first: HandshakeFacts; resumed: number }> {
  const session = join(dir, `session-${port}.pem`);
  const request = `GET /p0/x HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
  const run = async (sessionArgs: string[]) => {
    const proc = Bun.spawn(
      [
        "openssl",
        "s_client",
        "-connect",
        `127.0.0.1:${port}`,
        "-servername",
        host,
        "-ign_eof",
        ...sessionArgs,
      ],
      { stdin: new Blob([request]), stdout: "pipe", stderr: "pipe" },
    );
    const out = await new Response(proc.stdout).text();
    await proc.exited;
    return parseSClient(out);
  };
  await rm(session, { force: true });
  const first = await run(["-sess_out", session]);
  // No session saved: the server issued no ticket, so nothing could be resumed.
  if (!(await Bun.file(session).exists())) return { first, resumed: 0 };
  let resumed = 0;
  for (let i = 0; i < tries; i++) if ((await run(["-sess_in", session])).reused) resumed++;
  return { first, resumed };
}
