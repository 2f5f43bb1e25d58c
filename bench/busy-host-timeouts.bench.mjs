#!/usr/bin/env node
// How late timeouts fire while the host's event loop is busy (issue 29,
// item 2): STEPS steps, CONCURRENCY at a time, each `sleep 30` with a
// TIMEOUT_MS timeout, while the host blocks its own thread in bursts
// (BUSY_MS of synchronous work, then one free turn of the loop, over and
// over). Lateness = the result's killedAt (when the child was sent its
// killSignal) − (the moment just before the spawn + TIMEOUT_MS).
// Needs `npm run compile` (imports ../dist).
// Usage: node bench/busy-host-timeouts.bench.mjs [--steps=64] [--busy=400]
//        EXACTSPAWN_NATIVE=0 node bench/busy-host-timeouts.bench.mjs   (the child_process fallback)
import { performance } from "node:perf_hooks";
import { nativeStatus, spawn } from "../dist/index.js";

const arg = (name, fallback) => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found === undefined ? fallback : Number(found.slice(name.length + 3));
};
const STEPS = arg("steps", 64);
const CONCURRENCY = arg("concurrency", 16);
const TIMEOUT_MS = arg("timeout", 1500);
const BUSY_MS = arg("busy", 400);
const GOAL_MS = 200;

const now = () => performance.timeOrigin + performance.now();
const block = new Int32Array(new SharedArrayBuffer(4));

let done = false;
/** Bursts of synchronous work with one loop turn between them, until the run is over. */
async function busyHost() {
  let bursts = 0;
  while (!done) {
    Atomics.wait(block, 0, 0, BUSY_MS);
    bursts++;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return bursts;
}

const late = [];
let notKilled = 0;
async function worker(queue) {
  while (queue.length > 0) {
    queue.pop();
    const startedAt = now();
    const result = await spawn("/bin/sleep", ["30"], { timeout: TIMEOUT_MS, reject: false });
    if (result.failure !== "timeout" || result.killedAt === null) {
      notKilled++;
      continue;
    }
    late.push(result.killedAt - (startedAt + TIMEOUT_MS));
  }
}

const queue = Array.from({ length: STEPS }, (_, i) => i);
const busy = busyHost();
const started = now();
await Promise.all(Array.from({ length: CONCURRENCY }, () => worker(queue)));
done = true;
const bursts = await busy;
const wallMs = now() - started;

late.sort((a, b) => a - b);
const at = (q) => late[Math.min(late.length - 1, Math.floor(q * late.length))];
const fmt = (ms) => `${ms.toFixed(1)} ms`;
console.log(
  JSON.stringify(
    {
      engine: nativeStatus().loaded
        ? "native (deadline keeper)"
        : "child_process fallback (JS timer)",
      steps: STEPS,
      concurrency: CONCURRENCY,
      timeoutMs: TIMEOUT_MS,
      busyBurstMs: BUSY_MS,
      bursts,
      wallMs: Math.round(wallMs),
      killed: late.length,
      notKilled,
      lateMin: fmt(late[0]),
      lateMedian: fmt(at(0.5)),
      lateP95: fmt(at(0.95)),
      lateMax: fmt(late[late.length - 1]),
      overGoal: late.filter((ms) => ms > GOAL_MS).length,
    },
    null,
    2,
  ),
);
