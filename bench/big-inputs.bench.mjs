// Benchmark: the parent's CPU for one bash step with a big untrusted input,
// against a bare step measured in the same run (issue 37, "Big inputs cost
// the parent too much"). Three steps, in alternating order round after
// round: runtime.bash("true") bare; with a 5,000-key context (904 keys over
// the default bound of 4,096, reported as skipped); with one 2 MiB step value
// (spilled to a descriptor). Parent CPU is process.cpuUsage() (user +
// system, every thread of the host) around STEPS steps of one kind; the
// child's own CPU is not in it.
//
//   npm run compile && node bench/big-inputs.bench.mjs [--rounds=7] [--steps=20]
//
// Prints µs of parent CPU per step by kind (median over rounds) and each
// kind's paired ratio to the bare step (median of the per-round ratios).
// Goals: a 5,000-key context ≤ 4×, a 2 MiB value ≤ 3×.
import pino from "pino";
import { createRuntime } from "../dist/index.js";
import { median, pairedRatio } from "./stats.mjs";

const arg = (name, fallback) => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found === undefined ? fallback : Number(found.slice(name.length + 3));
};
const ROUNDS = arg("rounds", 7);
const STEPS = arg("steps", 20);

const runtime = createRuntime({
  parentEnv: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  logger: pino({ level: "silent" }),
});
const context = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, `v${i}`]));
const big = "x".repeat(2 * 1024 * 1024);
const kinds = {
  bare: () => runtime.bash("true"),
  context5000: () => runtime.bash("true", { context }),
  value2MiB: () => runtime.bash("true", { values: { big } }),
};
const names = Object.keys(kinds);

async function cpuPerStep(step) {
  const before = process.cpuUsage();
  for (let i = 0; i < STEPS; i++) await step();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / STEPS;
}

for (const name of names) await cpuPerStep(kinds[name]); // warm-up
const samples = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? names : [...names].reverse();
  for (const name of order) samples[name].push(await cpuPerStep(kinds[name]));
}
for (const name of names) {
  const ratio = pairedRatio(samples[name], samples.bare);
  const range = samples[name].map((v, r) => v / samples.bare[r]);
  console.log(
    `${name.padEnd(12)} ${median(samples[name]).toFixed(0).padStart(7)} µs parent CPU/step` +
      `  ${ratio.toFixed(2)}× bare (rounds ${Math.min(...range).toFixed(2)}–${Math.max(...range).toFixed(2)})`,
  );
}
console.log(
  `load: ${(await import("node:os"))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
