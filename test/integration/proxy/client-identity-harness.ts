/**
 * The pieces of the live client-identity tests (client-identity*.test.ts): one request on a fresh
 * connection from a chosen loopback address, optionally after a PROXY header and over TLS, and a model
 * whose routes show the client (an echo, a per-client rate limit, a relayed route, an IP allow list).
 */
import { connect, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import type { IPAccessList, Listener } from "../../../src/model/index.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";
import { rateLimitGuard } from "../../../src/proxy/testing/guards.ts";
import {
  backend,
  forwardTo,
  listener,
  match,
  model,
  route,
  vhost,
} from "../../../src/proxy/testing/model.ts";
import type { Received } from "../../../src/proxy/testing/upstream.ts";
import { parseResponse, type RawResponse } from "../../helpers/raw-http.ts";

export const HOST = "who.example";
export const TRUSTED = "127.0.0.2";

export interface Sent {
  readonly port: number;
  readonly path: string;
  readonly from?: string;
  readonly xff?: string;
  /** Bytes before the request (a PROXY header). */
  readonly preamble?: Uint8Array;
  readonly tls?: boolean;
  /** Send the preamble only, then wait for the server to close. */
  readonly hold?: boolean;
}

/** One request on a fresh connection from `from`, read until the server closes (or resets) it. */
export function send(s: Sent): Promise<RawResponse | "closed"> {
  const head =
    `GET ${s.path} HTTP/1.1\r\nHost: ${HOST}\r\n` +
    (s.xff === undefined ? "" : `X-Forwarded-For: ${s.xff}\r\n`) +
    "Connection: close\r\n\r\n";
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const done = () => resolve(chunks.length === 0 ? "closed" : parseResponse(Buffer.concat(chunks)));
    const tcp = connect({ host: "127.0.0.1", port: s.port, localAddress: s.from ?? "127.0.0.1" }, () => {
      if (s.preamble !== undefined) tcp.write(s.preamble);
      if (s.hold) return;
      if (!s.tls) {
        tcp.write(head);
        return;
      }
      const tls: Socket = connectTls({ socket: tcp, servername: HOST, rejectUnauthorized: false }, () =>
        tls.write(head),
      );
      tls.on("data", (c: Buffer) => chunks.push(c));
      tls.on("error", () => {});
      tls.on("close", done);
    });
    tcp.setTimeout(s.hold ? 18_000 : 5000, () => tcp.destroy());
    if (!s.tls || s.hold) tcp.on("data", (c: Buffer) => chunks.push(c));
    tcp.on("error", () => {});
    tcp.on("close", () => {
      if (!s.tls || s.hold) done();
    });
  });
}

export const v1 = (client: string) => Buffer.from(`PROXY TCP4 ${client} 10.0.0.1 40000 443\r\n`);
export function v2(client: [number, number, number, number]): Uint8Array {
  const sig = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];
  const tlv = [0x04, 0x00, 0x02, 0x61, 0x62];
  return Uint8Array.from([
    ...sig,
    0x21,
    0x11,
    0,
    12 + tlv.length,
    ...client,
    10,
    0,
    0,
    1,
    0x9c,
    0x40,
    1,
    0xbb,
    ...tlv,
  ]);
}

const allowLoopback: IPAccessList = {
  source: { kind: "AuthPolicy", namespace: "test", name: "loopback" },
  allow: ["127.0.0.0/8"],
  deny: [],
};

export function gatewayModel(upstream: number, tls: boolean, extra: Partial<Listener> = {}) {
  return model(
    [
      listener(
        [
          vhost(HOST, [
            route("limited", match("/limited"), forwardTo("up"), {
              rateLimit: rateLimitGuard(1, [{ source: "ClientIP" }], `who-${tls}`),
            }),
            // A policy trusting every address itself: after a PROXY header it must still walk nothing.
            route("own-proxies", match("/own-proxies"), forwardTo("up"), {
              rateLimit: {
                ...rateLimitGuard(1, [{ source: "ClientIP" }], `own-${tls}`),
                clientIP: { trustedProxies: ["0.0.0.0/0", "::/0"] },
              },
            }),
            // The raw front relays this one to the listener's app (CORS is not on its fast path).
            route("slow", match("/slow"), forwardTo("up"), {
              filters: [
                {
                  kind: "CORS",
                  allowOrigins: ["https://app.example"],
                  allowMethods: ["GET"],
                  allowHeaders: [],
                  exposeHeaders: [],
                  allowCredentials: false,
                  maxAgeSeconds: 60,
                },
              ],
            }),
            // The allow list covers the trusted proxy: a client it cannot name must still be refused.
            route("allowed", match("/allowed"), forwardTo("up"), { ipAccess: [allowLoopback] }),
            route("echo", match("/"), forwardTo("up")),
          ]),
        ],
        {
          ...(tls
            ? { name: "test/https", protocol: "HTTPS", tls: { certificates: [selfSigned(HOST)] } }
            : {}),
          ...extra,
        },
      ),
    ],
    [backend("up", [upstream])],
  );
}

export function echoed(res: RawResponse | "closed"): Received {
  if (res === "closed") throw new Error("connection closed without an answer");
  return JSON.parse(res.body) as Received;
}
