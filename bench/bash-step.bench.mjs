// The cost of a bash step's environment policy, from one run, as medians:
//   1. a step with one 200 KiB value (spilled under both names) against the
//      same step with a small value: the extra cost of the spill (goal ≤ 3 ms),
//      in wall time and in the child's own CPU time (what the native engine's
//      wait4 reports; independent of how loaded the host is), and bash's own
//      share of it (the preamble's read lines from a file);
//   2. runtime.planBash with 1,000 step values (goal ≤ 1 ms);
//   3. the policy overhead of runtime.bash('true') against a raw
//      spawn(bash, ['-c', 'true']) with the same environment in the same run
//      (goal ≤ 10%), and the policy measured directly: planBash + spill
//      descriptor + close.
// Samples are interleaved so host load hits both sides alike.
// Run: npx tsc -p tsconfig.build.json && node bench/bash-step.bench.mjs
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createRuntime, renderPreamble, spawn, writeSpillValues } from "../dist/index.js";
import { nativeBinding } from "../dist/native.js";
import { spillValuesBytes } from "../dist/step/preamble.js";
import { median } from "./stats.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 60);
const PLAN_RUNS = 500;
const KIB = 1024;

const runtime = createRuntime({ logger: pino({ level: "silent" }) });
const bash = runtime.interpreter();
const small = { x: "y".repeat(64) };
const large = { x: "y".repeat(200 * KIB) };

async function time(fn) {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const fmt = (ms) => `${ms.toFixed(3)} ms`;

// Warm up both engines and the JIT.
for (let i = 0; i < 10; i++) {
  await runtime.bash("true", { values: large });
  await spawn(bash, ["-c", "true"]);
}

// The anchors run bash with the environment the runtime passes on (the
// parent's): bash with an empty environment starts ~2 ms faster (no locale to
// load for LANG), which is not a cost of the policy.
const parentEnv = runtime.planBash("true").bounded.env;
// Bash's own cost of reading the 200 KiB value back with the preamble's load
// and assignment lines, copying it to the alias (as the step does), from a regular file
// (seekable, like the memfd) opened afresh for each sample: the floor of the
// read-back, whoever writes it.
const floorDir = mkdtempSync(join(tmpdir(), "exactspawn-bench-"));
const floorFile = join(floorDir, "v0");
writeFileSync(floorFile, spillValuesBytes([large.x]), { mode: 0o600 });
const readLines = renderPreamble(
  [
    { name: "RECIPE_VAR_x", bytes: large.x.length },
    { name: "X", bytes: large.x.length, sameAs: "RECIPE_VAR_x" },
  ],
  { values: 3 },
);
async function rawRead() {
  const fd = openSync(floorFile, "r");
  try {
    return await time(() =>
      spawn(bash, ["-c", `${readLines}true`], {
        env: parentEnv,
        stdio: ["ignore", "pipe", "pipe", fd],
      }),
    );
  } finally {
    closeSync(fd);
  }
}

// 1 and 3: interleaved spawns.
const samples = { small: [], large: [], rawBase: [], rawRead: [], step: [], raw: [] };
const childCpu = { small: [], large: [] };
/** The child's user + system CPU in ms; undefined on the fallback (no wait4 usage). */
const cpuOf = (result) =>
  result.resourceUsage === null || result.resourceUsage === undefined
    ? undefined
    : (result.resourceUsage.userCpuMicros + result.resourceUsage.systemCpuMicros) / 1000;
async function timedStep(values, cpu) {
  let result;
  const ms = await time(async () => {
    result = await runtime.bash("true", { values });
  });
  const used = cpuOf(result);
  if (used !== undefined) cpu.push(used);
  return ms;
}
for (let i = 0; i < RUNS; i++) {
  samples.small.push(await timedStep(small, childCpu.small));
  samples.large.push(await timedStep(large, childCpu.large));
  samples.rawBase.push(await time(() => spawn(bash, ["-c", "true"], { env: parentEnv })));
  samples.rawRead.push(await rawRead());
}
// The overhead pair in its own loop: right after a 200 KiB step, the garbage
// it leaves would be collected during whichever sample came next.
for (let i = 0; i < RUNS * 2; i++) {
  samples.step.push(await time(() => runtime.bash("true")));
  samples.raw.push(await time(() => spawn(bash, ["-c", "true"], { env: parentEnv })));
}
rmSync(floorDir, { recursive: true, force: true });

// 2: planning 1,000 step values (2,000 variables with the aliases).
const thousand = {};
for (let i = 0; i < 1000; i++) thousand[`value_${i}`] = "v".repeat(20 + (i % 200));
const planSamples = [];
for (let i = 0; i < PLAN_RUNS; i++) {
  planSamples.push(await time(() => runtime.planBash("true", { values: thousand })));
}

// 3b: the policy alone for the 200 KiB step: plan, open the spill descriptor, close it.
const policySamples = [];
for (let i = 0; i < RUNS * 4; i++) {
  policySamples.push(
    await time(async () => {
      const plan = runtime.planBash("true", { values: large });
      const values = writeSpillValues(plan.spill, plan.layered.env, { binding: nativeBinding() });
      values.descriptor?.close();
    }),
  );
}

const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
const plan = median(planSamples);
const policy = median(policySamples);
console.log(`runs ${RUNS}; bash ${bash}; node ${process.version}`);
console.log(`step, small value            median ${fmt(m.small)}`);
console.log(`step, 200 KiB value          median ${fmt(m.large)}`);
console.log(`  extra cost of the 200 KiB value: ${fmt(m.large - m.small)} (goal <= 3 ms)`);
if (childCpu.small.length > 0) {
  const extra = median(childCpu.large) - median(childCpu.small);
  console.log(
    `  the child's own CPU: ${fmt(median(childCpu.small))} -> ${fmt(median(childCpu.large))}, extra ${fmt(extra)} (goal <= 3 ms)`,
  );
}
console.log(
  `  of which bash's own read-back (raw bash, the same read and copy lines): ${fmt(m.rawRead - m.rawBase)}`,
);
console.log(`planBash, 1,000 step values  median ${fmt(plan)} (goal <= 1 ms)`);
console.log(`runtime.bash('true')         median ${fmt(m.step)}`);
console.log(`raw spawn(bash -c true)      median ${fmt(m.raw)} (same environment)`);
console.log(
  `  policy overhead: ${fmt(m.step - m.raw)} = ${(((m.step - m.raw) / m.raw) * 100).toFixed(1)}% of the raw spawn (goal <= 10%)`,
);
console.log(
  `policy alone (planBash + spill descriptor + close, 200 KiB value) median ${fmt(policy)} = ${((policy / m.raw) * 100).toFixed(1)}% of the raw spawn`,
);
