#!/usr/bin/env node
// What a sandboxed spawn costs in two builds side by side, in paired rounds
// (bench/ab.mjs's method): sequential spawn('/bin/true', { sandbox }) with
// stdio ignored, through each checkout's compiled dist/ and its own addon and
// exec helper, alternated round by round so load that drifts on a shared
// machine hits both alike. Rows: plain (no sandbox), `{ writable: [tmp],
// network: false, readOnlyView: false }` (Landlock and the filter only) and,
// where this host can make it, the same with the read-only view.
// Usage: node bench/sandbox-ab.mjs <checkoutA> <checkoutB> [rounds=15] [spawns per round=60]
// Prints ms per spawn and parent CPU µs per spawn (medians) and B/A (the
// median of the rounds' ratios).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { median, pairedRatio } from "./stats.mjs";

const [dirA, dirB, roundsArg, perRoundArg] = process.argv.slice(2);
if (dirA === undefined || dirB === undefined) {
  console.error(
    "usage: node bench/sandbox-ab.mjs <checkoutA> <checkoutB> [rounds] [spawns per round]",
  );
  process.exit(2);
}
const ROUNDS = Number(roundsArg ?? 15);
const PER_ROUND = Number(perRoundArg ?? 60);
const TRUE = "/bin/true";
const env = { PATH: "/usr/bin:/bin" };

const load = async (dir) => import(pathToFileURL(resolve(dir, "dist/index.js")).href);
const builds = { A: await load(dirA), B: await load(dirB) };
for (const [key, lib] of Object.entries(builds)) {
  if (!lib.nativeStatus().loaded) throw new Error(`${key}: the addon did not load`);
}
const support = builds.B.sandboxSupport();
if (support.missing.length > 0) {
  console.log(`sandbox-ab skipped: missing ${support.missing.join(", ")} here`);
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), "exactspawn-sandbox-ab-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));
const box = { writable: [work], network: false };

const rows = {
  plain: (lib) => lib.spawn(TRUE, [], { stdio: "ignore", env }),
  "sandboxed, no view": (lib) =>
    lib.spawn(TRUE, [], { stdio: "ignore", env, sandbox: { ...box, readOnlyView: false } }),
};
if (support.readOnlyView) {
  rows["sandboxed, view"] = (lib) => lib.spawn(TRUE, [], { stdio: "ignore", env, sandbox: box });
}

async function round(lib, startOne) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < PER_ROUND; i++) {
    const result = await startOne(lib);
    if (result.exitCode !== 0) throw new Error(`a benchmarked spawn ended with ${result.exitCode}`);
  }
  const used = process.cpuUsage(c0);
  return { ms: (performance.now() - t0) / PER_ROUND, cpu: (used.user + used.system) / PER_ROUND };
}

console.log(`A: ${dirA}\nB: ${dirB}`);
const wall = {};
for (const [name, startOne] of Object.entries(rows)) {
  const samples = { A: { ms: [], cpu: [] }, B: { ms: [], cpu: [] } };
  for (const lib of Object.values(builds)) await round(lib, startOne); // warm-up, discarded
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? ["A", "B"] : ["B", "A"];
    for (const key of order) {
      const { ms, cpu } = await round(builds[key], startOne);
      samples[key].ms.push(ms);
      samples[key].cpu.push(cpu);
    }
  }
  wall[name] = samples;
  const show = (key) =>
    `${key} ${median(samples[key].ms).toFixed(3)} ms, ${median(samples[key].cpu).toFixed(0)} µs CPU`;
  console.log(name);
  console.log(
    `  ${show("A")}; ${show("B")}; B/A time ${pairedRatio(samples.B.ms, samples.A.ms).toFixed(3)}×, ` +
      `B/A CPU ${pairedRatio(samples.B.cpu, samples.A.cpu).toFixed(3)}× (${ROUNDS} paired rounds of ${PER_ROUND})`,
  );
}
for (const key of ["A", "B"]) {
  for (const name of Object.keys(rows).filter((n) => n !== "plain")) {
    const over = pairedRatio(wall[name][key].ms, wall.plain[key].ms);
    console.log(`${key}: ${name} over plain ${over.toFixed(3)}×`);
  }
}
console.log(`loadavg ${readFileSync("/proc/loadavg", "utf8").trim()}`);
