// Benchmark: building one child environment (200-variable parent, 50 context
// keys, a step-value map, overlay, host values, correlation id) against one
// child_process.spawn('/bin/true') measured in the same run.
//
//   npm run build && node bench/env-build.bench.mjs
//
// Prints the median µs per build, the median µs per spawn, and their ratio
// (the goal is a build under 5% of one spawn).
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import pino from "pino";
import { createRuntime } from "../dist/index.js";
import { median } from "./stats.mjs";

function parentEnv() {
  const env = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: "/home/bench",
    USER: "bench",
    LANG: "C.UTF-8",
    SHELL: "/bin/bash",
  };
  for (let i = 0; Object.keys(env).length < 200; i++) {
    env[`BENCH_VAR_${String(i).padStart(3, "0")}`] = `value-${i}-`.repeat(1 + (i % 12));
  }
  return env;
}

function context() {
  const ctx = {};
  for (let i = 0; i < 45; i++) ctx[`context_key_${i}`] = `context value ${i} `.repeat(1 + (i % 8));
  // A few that are skipped, as in real use (logged at WARN; the logger is silenced below).
  ctx.ld_preload = "/tmp/x.so";
  ctx["issue title"] = "spaces";
  ctx.task_description = "Add validation for empty display names";
  ctx.repo_path = ".";
  ctx.REPO_PATH = "./other";
  return ctx;
}

const runtime = createRuntime({
  // The benchmark measures building from a large inherited environment.
  inherit: "all",
  parentEnv: parentEnv(),
  block: ["BENCH_VAR_007"],
  overlay: { ADAPTER_EXECUTABLE: "/opt/agent/bin/agent" },
  hostEnv: { EXACTSPAWN_NONINTERACTIVE: "1", PAGER: "cat" },
  correlationId: "run-bench",
  logger: pino({ level: "silent" }),
});
const ctx = context();
const stepValues = new Map([
  ["RECIPE_VAR_result", "ok"],
  ["RECIPE_VAR_count", "3"],
]);

function measureBuilds() {
  const batch = 50;
  const samples = [];
  let size = 0;
  for (let i = 0; i < 200; i++) runtime.buildEnv({ context: ctx, stepValues }); // warm-up
  for (let sample = 0; sample < 400; sample++) {
    const start = performance.now();
    for (let i = 0; i < batch; i++) size = runtime.buildEnv({ context: ctx, stepValues }).env.size;
    samples.push(((performance.now() - start) * 1000) / batch);
  }
  return { perBuildUs: median(samples), size };
}

function spawnOnce() {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn("/bin/true", [], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => resolve((performance.now() - start) * 1000));
  });
}

async function measureSpawns() {
  for (let i = 0; i < 10; i++) await spawnOnce(); // warm-up
  const samples = [];
  for (let i = 0; i < 200; i++) samples.push(await spawnOnce());
  return median(samples);
}

const builds = measureBuilds();
const spawnUs = await measureSpawns();
const buildsAgain = measureBuilds();
const buildUs = Math.max(builds.perBuildUs, buildsAgain.perBuildUs);
const ratio = buildUs / spawnUs;
console.log(`node ${process.version}, ${process.platform}-${process.arch}`);
console.log(`child env: ${builds.size} variables (200-variable parent, 50 context keys)`);
console.log(`buildEnv median: ${buildUs.toFixed(1)} µs per build (worse of two runs)`);
console.log(`spawn('/bin/true') median: ${spawnUs.toFixed(1)} µs per spawn, to exit`);
console.log(
  `ratio: ${(ratio * 100).toFixed(2)}% of one spawn (goal ≤ 5%) ${ratio <= 0.05 ? "OK" : "OVER"}`,
);
