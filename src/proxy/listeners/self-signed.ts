/**
 * A self-signed X.509 certificate made in process: a P-256 key from node:crypto, the certificate written
 * in DER by hand (RFC 5280) and signed with ECDSA-SHA256. It is the default certificate a gateway serves
 * when none is configured (ingress-nginx's "fake certificate"), so the executable and its image need no
 * openssl binary. Fields: version 3, a random positive 128-bit serial, issuer = subject = O=Gatehouse,
 * CN=<name>, the validity given, SubjectAltName DNS:<name>, and basicConstraints CA:FALSE (critical).
 */
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";

/** DER tag-length-value. */
function tlv(tag: number, content: Uint8Array): Uint8Array {
  const n = content.length;
  const length =
    n < 0x80
      ? [n]
      : n < 0x100
        ? [0x81, n]
        : n < 0x10000
          ? [0x82, n >> 8, n & 0xff]
          : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
  const out = new Uint8Array(1 + length.length + n);
  out[0] = tag;
  out.set(length, 1);
  out.set(content, 1 + length.length);
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const sequence = (...parts: Uint8Array[]) => tlv(0x30, concat(...parts));
const set = (...parts: Uint8Array[]) => tlv(0x31, concat(...parts));
const utf8 = (s: string) => tlv(0x0c, new TextEncoder().encode(s));

/** An OBJECT IDENTIFIER from its dotted form. */
function oid(dotted: string): Uint8Array {
  const [a = 0, b = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [40 * a + b];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let v = arc >>> 7; v > 0; v >>>= 7) base128.unshift((v & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return tlv(0x06, Uint8Array.from(bytes));
}

/** A positive INTEGER from big-endian bytes (a leading 0 keeps the top bit from reading as a sign). */
function positiveInteger(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  return tlv(0x02, (trimmed[0] ?? 0) & 0x80 ? concat(Uint8Array.of(0), trimmed) : trimmed);
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(d: Date): Uint8Array {
  const iso = d.toISOString(); // 2026-11-25T03:31:37.000Z
  const digits = iso.slice(0, 19).replace(/[-:T]/g, "");
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, new TextEncoder().encode(`${digits.slice(2)}Z`))
    : tlv(0x18, new TextEncoder().encode(`${digits}Z`));
}

const ECDSA_WITH_SHA256 = sequence(oid("1.2.840.10045.4.3.2"));

export interface SelfSignedPems {
  readonly certPem: string;
  readonly keyPem: string;
}

function pem(label: string, der: Uint8Array): string {
  const b64 = Buffer.from(der).toString("base64");
  return `-----BEGIN ${label}-----\n${b64.replace(/.{1,64}/g, "$&\n")}-----END ${label}-----\n`;
}

/** A new key and a certificate for `name`, valid from `notBefore` for `days` days. */
export function selfSignedCertificate(name: string, days: number, notBefore = new Date()): SelfSignedPems {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const dn = sequence(
    set(sequence(oid("2.5.4.10"), utf8("Gatehouse"))),
    set(sequence(oid("2.5.4.3"), utf8(name))),
  );
  const notAfter = new Date(notBefore.getTime() + days * 86_400_000);
  const san = sequence(tlv(0x82, new TextEncoder().encode(name))); // GeneralName dNSName [2]
  const extensions = sequence(
    sequence(oid("2.5.29.19"), tlv(0x01, Uint8Array.of(0xff)), tlv(0x04, sequence())), // CA:FALSE, critical
    sequence(oid("2.5.29.17"), tlv(0x04, san)),
  );
  const tbs = sequence(
    tlv(0xa0, tlv(0x02, Uint8Array.of(2))), // v3
    positiveInteger(randomBytes(16)),
    ECDSA_WITH_SHA256,
    dn,
    sequence(time(notBefore), time(notAfter)),
    dn,
    new Uint8Array(publicKey.export({ type: "spki", format: "der" })),
    tlv(0xa3, extensions),
  );
  const signature = sign("sha256", tbs, privateKey); // DER ECDSA-Sig-Value
  const cert = sequence(tbs, ECDSA_WITH_SHA256, tlv(0x03, concat(Uint8Array.of(0), signature)));
  const keyDer = new Uint8Array(privateKey.export({ type: "pkcs8", format: "der" }));
  return { certPem: pem("CERTIFICATE", cert), keyPem: pem("PRIVATE KEY", keyDer) };
}
