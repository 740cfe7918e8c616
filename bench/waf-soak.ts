import { ruleSetDirectives } from "../src/waf/directives.ts";
import { WafEngine, wafEngine } from "../src/waf/engine.ts";
import { packRequest, type WafRequest } from "../src/waf/protocol.ts";
import { enforcedCrs } from "../src/waf/testing/settings.ts";
import { inspectRequest } from "../src/waf/transaction.ts";

const total = Number(Bun.argv[2] ?? 100_000);
const settings = enforcedCrs("bench", "waf");

const engine = wafEngine();
if (!(engine instanceof WafEngine)) throw new Error(engine.error);
const set = engine.acquire(ruleSetDirectives(settings));
if ("error" in set) throw new Error(set.error);

const headers: [string, string][] = [
  ["Host", "shop.example"],
  [
    "User-Agent",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
  ],
  ["Accept", "text/html,application/xhtml+xml,*/*;q=0.8"],
  ["Accept-Language", "en-GB,en;q=0.9"],
  ["Cookie", "session=9f2c1e7a4b; theme=dark"],
];
const base = {
  clientAddress: "192.0.2.7",
  clientPort: 40000,
  serverAddress: "127.0.0.1",
  serverPort: 8080,
  httpVersion: "1.1",
};
const kinds: Omit<WafRequest, "transactionId">[] = [
  { ...base, method: "GET", target: "/catalogue/shoes?page=2&sort=-price", headers },
  { ...base, method: "GET", target: "/items?id=1%27%20OR%20%271%27%3D%271", headers },
  {
    ...base,
    method: "POST",
    target: "/comment",
    headers: [...headers, ["Content-Type", "application/x-www-form-urlencoded"]],
    body: Buffer.from("text=%3Cscript%3Ealert(1)%3C/script%3E"),
  },
  {
    ...base,
    method: "POST",
    target: "/api/v1/orders",
    headers: [...headers, ["Content-Type", "application/json"]],
    body: Buffer.from(JSON.stringify({ customer: "O'Brien", items: [{ sku: "A-1", qty: 2 }] })),
  },
];

function rssMb(): number {
  Bun.gc(true);
  return process.memoryUsage().rss / 1e6;
}

const samples: number[] = [rssMb()];
const step = Math.max(1, Math.floor(total / 10));
const started = performance.now();
let blocked = 0;
for (let i = 1; i <= total; i++) {
  const v = inspectRequest(
    engine,
    set,
    packRequest({ ...(kinds[i % kinds.length] as WafRequest), transactionId: `soak-${i}` }),
  );
  if (v.disruptive) blocked++;
  if (i % step === 0) {
    samples.push(rssMb());
    console.log(
      `${i} transactions  rss ${samples.at(-1)?.toFixed(1)} MB  ${((performance.now() - started) / i).toFixed(3)} ms each`,
    );
  }
}
const growth = (samples.at(-1) as number) - (samples[1] as number);
console.log(
  `blocked ${blocked}/${total}; RSS after the first tenth ${samples[1]?.toFixed(1)} MB, at the end ${samples.at(-1)?.toFixed(1)} MB (${growth >= 0 ? "+" : ""}${growth.toFixed(1)} MB)`,
);
if (growth > 16) process.exit(1);
