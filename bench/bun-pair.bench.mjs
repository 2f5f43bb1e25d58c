#!/usr/bin/env node
// exactspawn's spawn() against Bun.spawn, the issue-28 goal: sequential
// /bin/true, stdio ignored, in paired rounds (ours, then a Bun process, then
// ours…, the order alternating), each side warmed up with one discarded
// round first (Bun: bench/bun-anchor.mjs discards COUNT spawns of its own
// before it measures). Prints medians of spawns/s and parent CPU µs per
// spawn (every thread of the process) and the median of the rounds' ratios.
// Usage: BUN=/path/to/bun node bench/bun-pair.bench.mjs [spawnsPerRound=200] [rounds=11]
//        [--env=COUNT,BYTES]  (a fresh COUNT-variable record per spawn: row 9)
import { performance } from "node:perf_hooks";
import { spawn } from "../dist/index.js";
import { findBun, runBunAnchor } from "./anchor.mjs";
import { median, pairedRatio } from "./stats.mjs";

const positional = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const count = Number(positional[0] ?? 200);
const rounds = Number(positional[1] ?? 11);
const envArg = process.argv.find((a) => a.startsWith("--env="));
const [envCount, envBytes] = envArg === undefined ? [0, 0] : envArg.slice(6).split(",").map(Number);
const bun = findBun();
if (bun === null) throw new Error("set BUN=/path/to/bun");

/** The C loop's variables (bench/spawn_loop.c), as bun-anchor.mjs builds them. */
const base = {};
for (let i = 0; i < envCount; i++) {
  const name = `V${String(i).padStart(5, "0")}`;
  base[name] = "x".repeat(envBytes - name.length - 1);
}

async function ours() {
  // A new record per spawn, copied before the clock starts (the caller's cost).
  const records = envCount === 0 ? [] : Array.from({ length: count }, () => ({ ...base }));
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    await spawn(
      "/bin/true",
      [],
      envCount === 0 ? { stdio: "ignore" } : { stdio: "ignore", env: records.pop() },
    );
  }
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(c0);
  return { rate: count / seconds, cpu: (used.user + used.system) / count };
}

function theirs() {
  const extra = envCount === 0 ? [] : [envCount, envBytes];
  const [ns, cpuNs] = runBunAnchor(bun, ["ignore", count, 1, "/bin/true", ...extra]);
  return { rate: count / (ns / 1e9), cpu: cpuNs / 1000 / count };
}

const samples = { ours: { rate: [], cpu: [] }, bun: { rate: [], cpu: [] } };
await ours(); // warm-up, discarded
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? ["ours", "bun"] : ["bun", "ours"];
  for (const side of order) {
    const { rate, cpu } = side === "ours" ? await ours() : theirs();
    samples[side].rate.push(rate);
    samples[side].cpu.push(cpu);
  }
}
const show = (side) =>
  `${side} ${median(samples[side].rate).toFixed(0)}/s, ${median(samples[side].cpu).toFixed(0)} µs`;
console.log(
  `sequential /bin/true, stdio ignored${envCount === 0 ? "" : `, a fresh ${envCount}-variable record per spawn`} (${rounds} paired rounds of ${count})`,
);
console.log(
  `  ${show("ours")}; ${show("bun")}; ours/bun rate ${pairedRatio(samples.ours.rate, samples.bun.rate).toFixed(3)}x (goal >= 0.95), ` +
    `CPU ${pairedRatio(samples.ours.cpu, samples.bun.cpu).toFixed(3)}x (goal <= 1.5)`,
);
