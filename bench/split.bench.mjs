#!/usr/bin/env node
// Where the parent CPU of one small spawn goes, part by part: sequential
// /bin/true with stdio ignored, each layer measured in its own rounds,
// alternated round by round in one process (load that drifts hits all
// alike), one discarded warm-up round each. The layers:
//   loop     one event-loop turn awaited (a setImmediate): the floor of any
//            asynchronous spawn
//   addon    the addon's positional spawn() with a promise around onExit:
//            native spawn + exit watch + exit delivery + the loop
//   engine   the native engine's start() with a request made once: + the
//            engine's glue (packing, flags, the exit's conversion)
//   plan     the same with the deadline plan every Subprocess passes (no
//            timeout; the addon keeps it for endNow()'s escalation)
//   spawn    exactspawn's spawn(): + the options, the policy (resolution,
//            exec-size check, environment) and the Subprocess
// and, inside the addon layer, the CPU of the spawn() call itself (around
// the synchronous call, process.cpuUsage: every thread). The split printed:
//   native spawn     the addon's spawn() call (arguments, clone, watch setup)
//   exit + loop      addon - native spawn (the wait, reap and delivery, the
//                    loop turns, the promise)
//   engine glue      engine - addon
//   deadline plan    plan - engine
//   policy+subprocess  spawn - plan
// Prints medians of parent CPU µs per spawn (every thread) and each part's
// share. Needs `npm run compile` and a built addon.
// Usage: node bench/split.bench.mjs [spawnsPerRound=200] [rounds=9]
import { nativeBinding } from "../dist/native.js";
import { deadlinePlan } from "../dist/spawn/deadline-plan.js";
import { currentEngine, spawn } from "../dist/spawn/spawn.js";
import { engineRequest, spawnInput } from "../dist/spawn/spawn-request.js";
import { median } from "./stats.mjs";

const count = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 9);
const binding = nativeBinding();
if (binding === null) throw new Error("the addon did not load");

const TRUE = "/bin/true";
const ARGV = Buffer.from("/bin/true\0");
const ENVP = Buffer.alloc(0);
const IGNORE = [-1, -1, -1];
const request = engineRequest(spawnInput("spawn", TRUE, [], { stdio: "ignore" }), undefined);
const engine = currentEngine();
// The plan every Subprocess hands the engine (no timeout: only endNow()'s escalation).
const plan = deadlinePlan({
  timeout: undefined,
  killSignal: 15,
  ownGroup: false,
  killGraceMs: 2000,
  maxBuffer: 1,
});

/** CPU µs of the synchronous spawn() calls of the last addon round. */
let callMicros = 0;
const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

const layers = {
  loop: () => new Promise((resolve) => setImmediate(resolve)),
  addon: () =>
    new Promise((resolve) => {
      const before = cpuNow();
      binding.spawn(TRUE, ARGV, 1, ENVP, 0, undefined, IGNORE, 0, resolve);
      callMicros += cpuNow() - before;
    }),
  engine: () => new Promise((resolve) => engine.start(request, resolve)),
  plan: () => new Promise((resolve) => engine.start(request, resolve, undefined, plan)),
  spawn: () => spawn(TRUE, [], { stdio: "ignore" }),
};

async function round(once) {
  const before = cpuNow();
  for (let i = 0; i < count; i++) await once();
  return (cpuNow() - before) / count;
}

const samples = Object.fromEntries(Object.keys(layers).map((name) => [name, []]));
const calls = [];
for (const once of Object.values(layers)) await round(once); // warm-up
for (let r = 0; r < rounds; r++) {
  for (const [name, once] of Object.entries(layers)) {
    callMicros = 0;
    samples[name].push(await round(once));
    if (name === "addon") calls.push(callMicros / count);
  }
}
const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
const call = median(calls);
const parts = [
  ["native spawn (the addon's spawn() call)", call],
  ["exit watch + delivery + loop + promise", m.addon - call],
  ["engine glue", m.engine - m.addon],
  ["the run's deadline plan (endNow's escalation)", m.plan - m.engine],
  ["options, policy and Subprocess", m.spawn - m.plan],
];
console.log(
  `parent CPU µs per spawn (medians of ${rounds} rounds of ${count}): ` +
    Object.entries(m)
      .map(([k, v]) => `${k} ${v.toFixed(1)}`)
      .join(", "),
);
for (const [name, micros] of parts) {
  console.log(
    `  ${name.padEnd(42)} ${micros.toFixed(1).padStart(6)} µs  ${((100 * micros) / m.spawn).toFixed(0).padStart(3)}%`,
  );
}
console.log(`  (one loop turn alone: ${m.loop.toFixed(1)} µs)`);
