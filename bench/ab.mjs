#!/usr/bin/env node
// Two builds of the library side by side in one process, in paired rounds:
// the sequential rows (1: /bin/true, stdio ignored; 2: stdout and stderr
// captured) of each build, alternated round by round, so load that drifts on
// a shared machine hits both alike. Each build is a checkout's compiled dist/
// (with its own addon, loaded from its own path).
// Usage: node bench/ab.mjs <checkoutA> <checkoutB> [rounds=21] [spawns per round=60]
// Prints spawns/s and parent CPU per spawn (medians) and B/A (median of the
// rounds' ratios). Set EXACTSPAWN_EXIT_WATCH to choose B's and A's waiter.
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { median, pairedRatio } from "./stats.mjs";

const [dirA, dirB, roundsArg, perRoundArg] = process.argv.slice(2);
if (dirA === undefined || dirB === undefined) {
  console.error("usage: node bench/ab.mjs <checkoutA> <checkoutB> [rounds] [spawns per round]");
  process.exit(2);
}
const ROUNDS = Number(roundsArg ?? 21);
const PER_ROUND = Number(perRoundArg ?? 60);

const load = async (dir) => import(pathToFileURL(resolve(dir, "dist/index.js")).href);
const builds = { A: await load(dirA), B: await load(dirB) };
for (const [key, lib] of Object.entries(builds)) {
  const status = lib.nativeStatus();
  if (!status.loaded) throw new Error(`${key}: the addon did not load: ${status.reason}`);
  console.log(`${key}: ${key === "A" ? dirA : dirB} (exit watch: ${status.exitWatch ?? "n/a"})`);
}

const rows = {
  "(1) sequential /bin/true, stdio ignored": (lib) =>
    lib.spawn("/bin/true", [], { stdio: "ignore" }),
  "(2) sequential /bin/true, stdout+stderr captured": (lib) => lib.spawn("/bin/true", []),
};

async function round(lib, startOne) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < PER_ROUND; i++) await startOne(lib);
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(c0);
  return { rate: PER_ROUND / seconds, cpu: (used.user + used.system) / PER_ROUND };
}

for (const [name, startOne] of Object.entries(rows)) {
  const samples = { A: { rate: [], cpu: [] }, B: { rate: [], cpu: [] } };
  for (const lib of Object.values(builds)) await round(lib, startOne); // warm-up, discarded
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so neither always follows the other.
    const order = r % 2 === 0 ? ["A", "B"] : ["B", "A"];
    for (const key of order) {
      const { rate, cpu } = await round(builds[key], startOne);
      samples[key].rate.push(rate);
      samples[key].cpu.push(cpu);
    }
  }
  const show = (key) =>
    `${key} ${median(samples[key].rate).toFixed(0)}/s, ${median(samples[key].cpu).toFixed(0)} µs CPU`;
  console.log(name);
  console.log(
    `  ${show("A")}; ${show("B")}; B/A rate ${pairedRatio(samples.B.rate, samples.A.rate).toFixed(3)}×, ` +
      `B/A CPU ${pairedRatio(samples.B.cpu, samples.A.cpu).toFixed(3)}× (${ROUNDS} paired rounds of ${PER_ROUND})`,
  );
}
