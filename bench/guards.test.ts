import { expect, test } from "bun:test";
import { commandCalls } from "./guards.ts";

const info = [
  "# Commandstats",
  "cmdstat_evalsha:calls=1200,usec=9000,usec_per_call=7.50,rejected_calls=0,failed_calls=0",
  "cmdstat_time:calls=1200,usec=100,usec_per_call=0.08,rejected_calls=0,failed_calls=0",
  "cmdstat_info:calls=3,usec=90,usec_per_call=30.00,rejected_calls=0,failed_calls=0",
  "cmdstat_script|load:calls=1,usec=20,usec_per_call=20.00,rejected_calls=0,failed_calls=0",
  "",
].join("\r\n");

test("commandCalls reads every command's calls, leaving out INFO itself", () => {
  expect(commandCalls(info)).toEqual(
    new Map([
      ["evalsha", 1200],
      ["time", 1200],
      ["script|load", 1],
    ]),
  );
  expect(commandCalls("$0\r\n\r\n").size).toBe(0);
});
