/**
 * The server name (SNI, RFC 6066) of a TLS ClientHello, read from the first bytes a client sends, so a
 * passthrough listener can route the connection without terminating TLS. Only what routing needs is
 * read; every length is checked against what is there, so a malformed or hostile hello gives `invalid`
 * and never an exception or a read past the buffer.
 *
 * The hello may arrive in several TCP reads and (rarely, but RFC 8446 §5.1 allows it) be fragmented
 * over several TLS records: the caller appends reads to one buffer and calls again on `incomplete`,
 * bounding the buffer itself (`maxClientHelloBytes`).
 */

/** What was found in the bytes so far. */
export type ClientHelloResult =
  /** More bytes are needed. */
  | { readonly kind: "incomplete" }
  /** A whole ClientHello; `serverName` lower-cased, undefined when the client sent no SNI. */
  | { readonly kind: "hello"; readonly serverName: string | undefined }
  /** Not a TLS ClientHello, or one we refuse; the connection should be closed. */
  | { readonly kind: "invalid"; readonly reason: string };

/** A larger hello is refused: 16 KB is one full TLS record, far above real ones (post-quantum ~1.8 KB). */
export const maxClientHelloBytes = 16 * 1024;

const recordHeader = 5;
const handshakeRecord = 0x16;
const clientHelloType = 0x01;
const serverNameExtension = 0x0000;
const hostNameType = 0x00;

class Malformed extends Error {}

/** Bounds-checked big-endian reads over `bytes[start, end)`. */
class Cursor {
  constructor(
    private readonly bytes: Uint8Array,
    private pos: number,
    private readonly end: number,
  ) {}

  get remaining(): number {
    return this.end - this.pos;
  }

  u8(): number {
    if (this.remaining < 1) throw new Malformed("truncated");
    return this.bytes[this.pos++] as number;
  }

  u16(): number {
    return (this.u8() << 8) | this.u8();
  }

  u24(): number {
    return (this.u8() << 16) | (this.u8() << 8) | this.u8();
  }

  skip(n: number): void {
    if (n > this.remaining) throw new Malformed("truncated");
    this.pos += n;
  }

  /** A cursor over the next `n` bytes, which this one then skips. */
  sub(n: number): Cursor {
    if (n > this.remaining) throw new Malformed("a length runs past its container");
    const c = new Cursor(this.bytes, this.pos, this.pos + n);
    this.pos += n;
    return c;
  }

  take(n: number): Uint8Array {
    if (n > this.remaining) throw new Malformed("a length runs past its container");
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

/** Parse the ClientHello at the start of `bytes` (everything the client has sent so far). */
export function parseClientHello(bytes: Uint8Array): ClientHelloResult {
  try {
    const handshake = handshakeBytes(bytes);
    if (handshake === undefined) return { kind: "incomplete" };
    return { kind: "hello", serverName: serverNameOf(handshake) };
  } catch (err) {
    if (err instanceof Malformed) return { kind: "invalid", reason: err.message };
    throw err;
  }
}

/**
 * The ClientHello handshake message (header included) joined from the records it spans, or undefined
 * while it is not all there. Refuses anything that is not a TLS handshake record.
 */
function handshakeBytes(bytes: Uint8Array): Uint8Array | undefined {
  const fragments: Uint8Array[] = [];
  let have = 0;
  let need = -1; // whole handshake message length, once its header is known
  let pos = 0;
  while (need < 0 || have < need) {
    if (bytes.length - pos < recordHeader) return undefined;
    const c = new Cursor(bytes, pos, bytes.length);
    if (c.u8() !== handshakeRecord) throw new Malformed("not a TLS handshake record");
    if (c.u8() !== 3) throw new Malformed("not a TLS record version");
    c.u8(); // minor version: any (TLS 1.0 is what 1.3 clients put in the first record)
    const length = c.u16();
    if (length === 0 || length > maxClientHelloBytes) throw new Malformed("bad record length");
    if (c.remaining < length) return undefined;
    fragments.push(c.take(length));
    have += length;
    pos += recordHeader + length;
    if (need < 0 && have >= 4) {
      const head = join(fragments, 4);
      if (head[0] !== clientHelloType) throw new Malformed("first handshake message is not a ClientHello");
      need = 4 + (((head[1] as number) << 16) | ((head[2] as number) << 8) | (head[3] as number));
      if (need > maxClientHelloBytes) throw new Malformed("ClientHello too large");
    }
  }
  return join(fragments, need);
}

/** The first `n` bytes of the fragments, as one array (one fragment: no copy). */
function join(fragments: readonly Uint8Array[], n: number): Uint8Array {
  const first = fragments[0] as Uint8Array;
  if (first.length >= n) return first.subarray(0, n);
  const out = new Uint8Array(n);
  let at = 0;
  for (const f of fragments) {
    const part = f.subarray(0, Math.min(f.length, n - at));
    out.set(part, at);
    at += part.length;
    if (at === n) break;
  }
  return out;
}

/** The host_name of the server_name extension, lower-cased; undefined when absent. */
function serverNameOf(handshake: Uint8Array): string | undefined {
  const msg = new Cursor(handshake, 0, handshake.length);
  msg.u8(); // type, checked already
  const body = msg.sub(msg.u24());
  body.skip(2 + 32); // legacy_version, random
  const sessionId = body.u8();
  if (sessionId > 32) throw new Malformed("session id longer than 32 bytes");
  body.skip(sessionId);
  const suites = body.u16();
  if (suites < 2 || suites % 2 !== 0) throw new Malformed("bad cipher suites length");
  body.skip(suites);
  const compression = body.u8();
  if (compression < 1) throw new Malformed("no compression methods");
  body.skip(compression);
  if (body.remaining === 0) return undefined; // no extensions at all (old clients)
  const extensions = body.sub(body.u16());
  if (body.remaining !== 0) throw new Malformed("bytes after the extensions");
  const seen = new Set<number>();
  let name: string | undefined;
  while (extensions.remaining > 0) {
    const type = extensions.u16();
    const data = extensions.sub(extensions.u16());
    // RFC 8446 §4.2: a repeated extension is a fatal error; a second SNI must not pick another route.
    if (seen.has(type)) throw new Malformed("repeated extension");
    seen.add(type);
    if (type === serverNameExtension) name = hostNameOf(data);
  }
  return name;
}

function hostNameOf(data: Cursor): string | undefined {
  const list = data.sub(data.u16());
  if (data.remaining !== 0) throw new Malformed("bytes after the server name list");
  let host: string | undefined;
  while (list.remaining > 0) {
    const type = list.u8();
    const raw = list.take(list.u16());
    if (type !== hostNameType) continue; // unknown name types are skipped, as RFC 6066 allows
    if (host !== undefined) throw new Malformed("more than one host_name");
    host = hostString(raw);
  }
  return host;
}

/** RFC 6066: ASCII, no trailing dot. Anything but letters, digits, `-`, `.` and `_` is refused. */
function hostString(raw: Uint8Array): string {
  if (raw.length === 0 || raw.length > 253) throw new Malformed("bad host_name length");
  let out = "";
  for (const b of raw) {
    const ok =
      (b >= 0x61 && b <= 0x7a) ||
      (b >= 0x41 && b <= 0x5a) ||
      (b >= 0x30 && b <= 0x39) ||
      b === 0x2d ||
      b === 0x2e ||
      b === 0x5f;
    if (!ok) throw new Malformed("host_name has a character not allowed in a DNS name");
    out += String.fromCharCode(b >= 0x41 && b <= 0x5a ? b + 0x20 : b);
  }
  if (out.endsWith(".") || out.startsWith(".") || out.includes("..")) throw new Malformed("bad host_name");
  return out;
}
