import { afterAll, describe, expect, test } from "bun:test";
import { answer, queryDns, queryMessage, startDnsResponder } from "./dns-responder.ts";

describe("DNS responder (where upstream runs CoreDNS)", async () => {
  const dns = await startDnsResponder();
  afterAll(() => dns.stop());

  test("an A query gets one answer with the query's id", async () => {
    const reply = await queryDns("127.0.0.1", dns.port, "foo.bar.com.", "A", 2000);
    expect(reply.rcode).toBe(0);
    expect(reply.answers).toBe(1);
    expect(dns.queries).toBe(1);
  });

  test("another type gets an empty answer, still a reply", async () => {
    const reply = await queryDns("127.0.0.1", dns.port, "foo.bar.com", "AAAA", 2000);
    expect(reply.answers).toBe(0);
  });

  test("the answer record is 127.0.0.1, its name a pointer to the question", () => {
    const reply = answer(queryMessage(7, "foo.bar.com", "A")) as Buffer;
    expect(reply.readUInt16BE(0)).toBe(7);
    expect([...reply.subarray(-16)]).toEqual([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 127, 0, 0, 1]);
  });

  test("a response or a truncated message is not answered", () => {
    const q = queryMessage(1, "a.b", "A");
    expect(answer(answer(q) as Buffer)).toBeUndefined();
    expect(answer(q.subarray(0, 14))).toBeUndefined();
  });
});
