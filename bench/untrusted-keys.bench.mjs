// Benchmark: planning a bash step whose untrusted input has far too many keys
// (issue 21, finding 9), and starting a step with the most keys the default
// bound exports.
//
//   npm run build && node bench/untrusted-keys.bench.mjs
//
// Prints, for a million-key Map and a million-key plain object given as
// context and as step values, the ms until planBash throws TooManyKeysError
// (the time to build the input is printed beside it: the host pays it
// first); then the ms runtime.bash takes to run `true` with 4,096 context
// keys (the default maxUntrustedKeys) and with 5,000 (904 skipped).
import { performance } from "node:perf_hooks";
import pino from "pino";
import { createRuntime, TooManyKeysError } from "../dist/index.js";
import { median } from "./stats.mjs";

const runtime = createRuntime({
  parentEnv: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  logger: pino({ level: "silent" }),
});

function timed(fn) {
  const start = performance.now();
  const value = fn();
  return { ms: performance.now() - start, value };
}

function refusal(label, input) {
  for (const key of ["context", "values"]) {
    const { ms, value } = timed(() => {
      try {
        runtime.planBash("true", { [key]: input });
        return "planned";
      } catch (error) {
        return error instanceof TooManyKeysError ? "TooManyKeysError" : String(error);
      }
    });
    console.log(`${label} as ${key}: ${value} after ${ms.toFixed(1)} ms`);
  }
}

const N = 1_000_000;
const map = timed(() => new Map(Array.from({ length: N }, (_, i) => [`key_${i}`, "v"])));
console.log(`building a ${N}-key Map: ${map.ms.toFixed(0)} ms`);
refusal("million-key Map", map.value);
const record = timed(() => {
  const o = {};
  for (let i = 0; i < N; i++) o[`key_${i}`] = "v";
  return o;
});
console.log(`building a ${N}-key object: ${record.ms.toFixed(0)} ms`);
refusal("million-key object", record.value);

for (const count of [4_096, 5_000]) {
  const context = Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, "v"]));
  const runs = [];
  for (let round = 0; round < 5; round++) {
    const start = performance.now();
    await runtime.bash("true", { context });
    runs.push(performance.now() - start);
  }
  console.log(
    `runtime.bash("true") with ${count} context keys: median ${median(runs).toFixed(1)} ms`,
  );
}
