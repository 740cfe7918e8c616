/**
 * A small DNS responder over UDP where upstream's data runs CoreDNS (`gateway-conformance-infra/coredns`,
 * not packaged in Debian): every A query is answered with 127.0.0.1 (TTL 0), any other type with an empty
 * answer, so "a DNS reply arrives" — all the conformance case checks — holds for any question. And the
 * matching client: one query, one reply with the same id, as miekg/dns `Exchange` does.
 */
import { udpExchange } from "./udp-echo-server.ts";

/** Where CoreDNS listens in upstream's pod (the Service's targetPort). */
export const dnsResponderPort = 53;

const typeCodes: Record<string, number> = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  MX: 15,
  TXT: 16,
  AAAA: 28,
};

export interface DnsResponder {
  readonly port: number;
  /** Queries answered so far. */
  readonly queries: number;
  stop(): void;
}

export async function startDnsResponder(): Promise<DnsResponder> {
  let queries = 0;
  const socket = await Bun.udpSocket({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(s, data, port, address) {
        const reply = answer(Buffer.from(data));
        if (!reply) return; // not a query we can parse: a server stays silent, as CoreDNS does on garbage
        queries++;
        s.send(reply, port, address);
      },
    },
  });
  return {
    port: socket.port,
    get queries() {
      return queries;
    },
    stop: () => socket.close(),
  };
}

/** The reply to one query message, or undefined when it is not a one-question query. */
export function answer(query: Buffer): Buffer | undefined {
  if (query.length < 12 || (query[2] as number) & 0x80) return undefined;
  if (query.readUInt16BE(4) !== 1) return undefined;
  const end = questionEnd(query, 12);
  if (end === undefined) return undefined;
  const question = query.subarray(12, end);
  const type = query.readUInt16BE(end - 4);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0); // id
  header.writeUInt16BE(0x8000 | 0x0400 | (query.readUInt16BE(2) & 0x0100) | 0x0080, 2); // QR AA RD RA
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(type === 1 ? 1 : 0, 6);
  if (type !== 1) return Buffer.concat([header, question]);
  // Name: a pointer to the question's name at offset 12; type A, class IN, TTL 0, 4 bytes.
  const record = Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 127, 0, 0, 1]);
  return Buffer.concat([header, question, record]);
}

/** Offset just after the question (name, type, class) that starts at `at`. */
function questionEnd(msg: Buffer, at: number): number | undefined {
  let i = at;
  while (i < msg.length) {
    const len = msg[i] as number;
    if (len === 0) return i + 5 <= msg.length ? i + 5 : undefined;
    if (len > 63) return undefined; // no compression in a question we send or accept
    i += len + 1;
  }
  return undefined;
}

/** A one-question query message with recursion desired. */
export function queryMessage(id: number, name: string, type: string): Buffer {
  const code = typeCodes[type.toUpperCase()];
  if (code === undefined) throw new Error(`unknown DNS type ${type}`);
  const labels = name.replace(/\.$/, "").split(".").filter(Boolean);
  const parts = labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, "ascii")]));
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2);
  header.writeUInt16BE(1, 4);
  const tail = Buffer.alloc(5);
  tail.writeUInt16BE(code, 1);
  tail.writeUInt16BE(1, 3);
  return Buffer.concat([header, ...parts, tail]);
}

export interface DnsReply {
  readonly id: number;
  readonly rcode: number;
  readonly answers: number;
}

/** Send one query and read its reply; rejects on timeout or a reply that is not an answer to it. */
export async function queryDns(
  host: string,
  port: number,
  name: string,
  type: string,
  timeoutMs: number,
): Promise<DnsReply> {
  const id = Math.floor(Math.random() * 0x10000);
  const reply = await udpExchange(host, port, queryMessage(id, name, type), timeoutMs);
  if (reply.length < 12 || !((reply[2] as number) & 0x80)) throw new Error("the reply is not a DNS response");
  if (reply.readUInt16BE(0) !== id) throw new Error(`reply id ${reply.readUInt16BE(0)}, want ${id}`);
  return { id, rcode: (reply[3] as number) & 0x0f, answers: reply.readUInt16BE(6) };
}
