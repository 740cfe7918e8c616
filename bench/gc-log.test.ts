import { expect, test } from "bun:test";
import { collections } from "./gc-log.ts";

// Three collections as Bun 1.4 logs them with BUN_JSC_logGC=1 (marking details shortened), with the
// other lines JSC writes between them.
const log = `[GC<0x3>: START M 53976kb => EdenCollection, a=0kb hf=0.000 mu=0.600 v=0kb (C:0 M:0 P1:0) o=10 b=188 i#1:N<CsMsrShDMsm(188)SrbBcs> => 26111kb, p=1.792434ms (max 3.359877), cycle 1.741549ms END]
GC END!
[GC<0x3>: epilogue 0.018525ms]
[GC<0x3>: START M 53875kb => EdenCollection, a=0kb hf=0.000 i#3:P<Msm(0)CsShMsrBcsSrbDCbDomoJwOWs>Pbc => 26131kb, p=0.996879ms (max 3.359877), cycle 0.968056ms END]
GC END!
[GC<0x3>: START M 90000kb => FullCollection, a=0kb i#1:N<Cs> => 30000kb, p=4.5ms (max 4.5), cycle 4.4ms END]
`;

test("collections reads start and end sizes, kind and pause of each", () => {
  const c = collections(log);
  expect(c).toHaveLength(3);
  expect(c[0]).toEqual({ startKb: 53976, endKb: 26111, pauseMs: 1.792434, kind: "Eden" });
  expect(c[2]?.kind).toBe("Full");
  expect(c.map((x) => x.pauseMs)).toEqual([1.792434, 0.996879, 4.5]);
  expect(collections("no collections here")).toEqual([]);
});
