#!/usr/bin/env node
// Long run, not in the suite (issue 11, bug 4): an output larger than a
// string can hold still settles the run. `node scripts/huge-output.mjs`
// (after `npm run compile`) captures MAX_STRING_LENGTH + 4 KiB bytes with
// `encoding: "utf8"` and `maxBuffer: Infinity`: the limit is clamped, so the
// run ends as a maxBuffer failure holding exactly MAX_STRING_LENGTH
// characters. `--buffer` does the same past buffer.constants.MAX_LENGTH
// (4 GiB in Node 20) with `encoding: "buffer"`; it needs > 8 GiB of memory.
// Prints one JSON line and exits 1 when the result is not the expected one.
import { constants } from "node:buffer";
import { spawn } from "../dist/index.js";

const asBuffer = process.argv.includes("--buffer");
const limit = asBuffer ? constants.MAX_LENGTH : constants.MAX_STRING_LENGTH;
const result = await spawn("/usr/bin/head", ["-c", String(limit + 4096), "/dev/zero"], {
  encoding: asBuffer ? "buffer" : "utf8",
  maxBuffer: Number.POSITIVE_INFINITY,
  reject: false,
});
const summary = {
  encoding: asBuffer ? "buffer" : "utf8",
  failure: result.failure,
  length: result.stdout?.length,
  expected: limit,
  native: result.native,
};
console.log(JSON.stringify(summary));
process.exitCode = summary.failure === "maxBuffer" && summary.length === limit ? 0 : 1;
