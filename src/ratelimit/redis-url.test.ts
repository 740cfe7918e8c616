import { expect, test } from "bun:test";
import { parseRedisUrl, redact } from "./redis-url.ts";

test("standalone, with auth, db and TLS", () => {
  expect(parseRedisUrl("redis://127.0.0.1:6380/2")).toEqual({
    kind: "standalone",
    node: { host: "127.0.0.1", port: 6380 },
    db: 2,
    tls: false,
  });
  expect(parseRedisUrl("rediss://user:p%40ss@redis.example")).toEqual({
    kind: "standalone",
    node: { host: "redis.example", port: 6379 },
    db: 0,
    tls: true,
    username: "user",
    password: "p@ss",
  });
  expect(parseRedisUrl("redis://:pw@[::1]:7000")).toMatchObject({
    node: { host: "::1", port: 7000 },
    password: "pw",
  });
});

test("sentinel and cluster", () => {
  expect(parseRedisUrl("redis-sentinel://s1,s2:26380/1?name=mymaster&sentinelPassword=x")).toEqual({
    kind: "sentinel",
    sentinels: [
      { host: "s1", port: 26379 },
      { host: "s2", port: 26380 },
    ],
    name: "mymaster",
    db: 1,
    tls: false,
    sentinelPassword: "x",
  });
  expect(parseRedisUrl("redis-cluster://a:7000,b:7001")).toEqual({
    kind: "cluster",
    nodes: [
      { host: "a", port: 7000 },
      { host: "b", port: 7001 },
    ],
    tls: false,
  });
});

test("bad URLs come back as messages, never throws", () => {
  expect(parseRedisUrl("http://x")).toHaveProperty("error");
  expect(parseRedisUrl("redis://a,b")).toHaveProperty("error");
  expect(parseRedisUrl("redis-sentinel://a")).toHaveProperty("error");
  expect(parseRedisUrl("redis-cluster://a/3")).toHaveProperty("error");
  expect(parseRedisUrl("redis://a:99999")).toHaveProperty("error");
  expect(redact("redis://u:secret@h:1")).toBe("redis://u:***@h:1");
});
